#!/usr/bin/env python3
"""Times jobgraph's `filter` step, ImageMagick and libvips on the same 24-megapixel image.

Called by ../filters.sh, which installs the peers and builds jobgraph in release; run that instead.

The image is made by libvips from Perlin noise (three colour fields and fine grain), so it is generated
here, not downloaded, and looks to the codecs like a photo: smooth areas and texture, about 1.4 bits per
pixel as a quality-90 JPEG. Every tool reads it and writes the result in the same format, JPEG at quality
90 with 4:2:0 chroma (jobgraph's default, libvips' default, and ImageMagick with `-sampling-factor 2x2`),
so the figures compare the same work: decode, effect, encode. Each run's output is checked to exist with
the expected size; a tool that fails makes the script exit 1 without figures for that cell.
"""

import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import options as option_parser  # noqa: E402
from measure import measure, median  # noqa: E402

WIDTH, HEIGHT = 6000, 4000

# The classic sepia matrix, mixed 80% with the identity: what `convert -sepia-tone 80%` is asked for, as a
# recombination libvips can apply (ImageMagick's own sepia-tone is a different, threshold-based formula).
SEPIA = [[0.393, 0.769, 0.189], [0.349, 0.686, 0.168], [0.272, 0.534, 0.131]]
SEPIA80 = [[0.8 * SEPIA[r][c] + (0.2 if r == c else 0.0) for c in range(3)] for r in range(3)]


def cases(convert, ext):
    """name -> (jobgraph filter parameters, convert arguments, vips arguments, expected output size)."""
    save = f"[Q=90]" if ext == "jpg" else ""
    quality = ["-quality", "90", "-sampling-factor", "2x2"] if ext == "jpg" else []
    jobgraph_quality = ", quality: 90" if ext == "jpg" else ""
    return {
        "sepia": (f"effect: sepia, intensity: 0.8{jobgraph_quality}",
                  [convert, f"photo.{ext}", "-sepia-tone", "80%"] + quality + [f"out/convert.{ext}"],
                  ["vips", "recomb", f"photo.{ext}", f"out/vips.{ext}{save}", "sepia80.mat"],
                  (WIDTH, HEIGHT)),
        "blur": (f"effect: blur, radius: 10{jobgraph_quality}",
                 [convert, f"photo.{ext}", "-blur", "0x10"] + quality + [f"out/convert.{ext}"],
                 ["vips", "gaussblur", f"photo.{ext}", f"out/vips.{ext}{save}", "10"],
                 (WIDTH, HEIGHT)),
        "resize": (f"effect: resize, width: 1500{jobgraph_quality}",
                   [convert, f"photo.{ext}", "-filter", "Lanczos", "-resize", "1500x"] + quality + [f"out/convert.{ext}"],
                   ["vips", "resize", f"photo.{ext}", f"out/vips.{ext}{save}", "0.25", "--kernel", "lanczos3"],
                   (1500, 1000)),
        # Decode and encode only (a resize to the same size is no work): the codecs' floor for each tool.
        "copy": (f"effect: resize, width: {WIDTH}{jobgraph_quality}",
                 [convert, f"photo.{ext}"] + quality + [f"out/convert.{ext}"],
                 ["vips", "copy", f"photo.{ext}", f"out/vips.{ext}{save}"],
                 (WIDTH, HEIGHT)),
    }


def run(command, cwd, what):
    result = subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        sys.exit(f"filters.sh: {what} failed (exit {result.returncode}): {result.stderr.strip()[-500:]}")


def generate(workdir):
    """photo.jpg and photo.png, 6000×4000, from libvips' Perlin noise."""
    steps = [
        ["vips", "perlin", "red.v", str(WIDTH), str(HEIGHT), "--cell-size", "600", "--seed", "1"],
        ["vips", "perlin", "green.v", str(WIDTH), str(HEIGHT), "--cell-size", "450", "--seed", "2"],
        ["vips", "perlin", "blue.v", str(WIDTH), str(HEIGHT), "--cell-size", "750", "--seed", "3"],
        ["vips", "perlin", "grain.v", str(WIDTH), str(HEIGHT), "--cell-size", "6", "--seed", "4"],
        ["vips", "bandjoin", "red.v green.v blue.v", "colour.v"],
        ["vips", "linear", "grain.v", "fine.v", "0.25", "0"],
        ["vips", "add", "colour.v", "fine.v", "sum.v"],
        ["vips", "linear", "sum.v", "photo.v", "110", "128", "--uchar"],
        ["vips", "copy", "photo.v", "photo.jpg[Q=90]"],
        ["vips", "copy", "photo.v", "photo.png"],
    ]
    for step in steps:
        run(step, workdir, "generating the test image (" + " ".join(step[:2]) + ")")
    for name in os.listdir(workdir):
        if name.endswith(".v"):
            os.remove(os.path.join(workdir, name))
    with open(os.path.join(workdir, "sepia80.mat"), "w", encoding="utf-8") as matrix:
        matrix.write("3 3\n" + "".join(" ".join(f"{value:.4f}" for value in row) + "\n" for row in SEPIA80))


def image_size(path):
    result = subprocess.run(["vipsheader", "-f", "width", path], capture_output=True, text=True)
    height = subprocess.run(["vipsheader", "-f", "height", path], capture_output=True, text=True)
    try:
        return int(result.stdout), int(height.stdout)
    except ValueError:
        return None


def time_tool(command, workdir, output, expected, runs):
    """The median seconds of `runs` runs, or an error message."""
    times = []
    for _ in range(runs):
        out = os.path.join(workdir, "out")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        shutil.rmtree(os.path.join(workdir, ".jobgraph"), ignore_errors=True)
        measurement = measure(command, workdir, timeout=600)
        if measurement.timed_out:
            return None, "timed out after 600 s"
        if measurement.status != 0:
            return None, f"exit {measurement.status}: {measurement.stderr_tail.strip()[-300:]}"
        size = image_size(os.path.join(workdir, output))
        if size != expected:
            return None, f"wrote {output} as {size}, expected {expected}"
        times.append(measurement.seconds)
    return median(times), None


def parser(shell=False, prog=None):
    return option_parser.parser(__doc__, ["jobgraph", "convert", "runs", "cases", "formats", "keep"], shell, prog)


def main():
    options = parser().parse_args()

    workdir = tempfile.mkdtemp(prefix="jobgraph-filters-")
    print(f"== generating a {WIDTH}×{HEIGHT} test image in {workdir}", file=sys.stderr)
    generate(workdir)
    failures = []
    rows = []
    for format_name in options.formats:
        ext = {"jpeg": "jpg", "png": "png"}[format_name]  # the parser allows only these
        table = cases(options.convert, ext)
        for name in options.cases:
            if name not in table:
                sys.exit(f"filters.sh: unknown case '{name}'; expected {', '.join(table)}")
            parameters, convert_command, vips_command, expected = table[name]
            with open(os.path.join(workdir, "pipeline.yaml"), "w", encoding="utf-8") as pipeline:
                pipeline.write(f"version: 1\ntasks:\n  {name}:\n    filter: {{input: photo.{ext}, "
                               f"output: out/jobgraph.{ext}, {parameters}}}\n")
            print(f"== {name} ({format_name})", file=sys.stderr)
            figures = {}
            for tool, command in [("jobgraph", [options.jobgraph, "run", "pipeline.yaml", "--progress", "plain"]),
                                  ("convert", convert_command), ("vips", vips_command)]:
                seconds, error = time_tool(command, workdir, f"out/{tool}.{ext}", expected, options.runs)
                if error:
                    failures.append(f"{name} ({format_name}), {tool}: {error}")
                figures[tool] = seconds
            rows.append((f"{name} ({format_name})", figures))
    if not options.keep:
        shutil.rmtree(workdir, ignore_errors=True)

    def seconds(value):
        return "–" if value is None else f"{value:.2f}"

    def ratio(ours, theirs):
        return "–" if ours is None or theirs is None else f"{ours / theirs:.2f}"

    print(f"\n24-megapixel image ({WIDTH}×{HEIGHT}), median of {options.runs} runs, wall-clock seconds; "
          "ratio = jobgraph / peer (below 1: jobgraph faster)\n")
    header = f"{'case':<16} {'jobgraph':>9} {'convert':>9} {'vips':>9} {'÷ convert':>10} {'÷ vips':>8}"
    print(header)
    print("-" * len(header))
    for label, figures in rows:
        ours = figures["jobgraph"]
        print(f"{label:<16} {seconds(ours):>9} {seconds(figures['convert']):>9} {seconds(figures['vips']):>9} "
              f"{ratio(ours, figures['convert']):>10} {ratio(ours, figures['vips']):>8}")
    for failure in failures:
        print(f"error: {failure}", file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
