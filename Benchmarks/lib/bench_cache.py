#!/usr/bin/env python3
"""The pipeline and the table of ../output-cache.sh, which does the measuring in the shell: run that instead.

    bench_cache.py pipeline SOURCE_DIR          # the Brotli build as a jobgraph pipeline, on stdout
    bench_cache.py table "CLEAN" "LOCAL" "REMOTE" "SMALL"

Each quoted argument is the seconds of every run, separated by spaces; the table shows their medians and
each restore as a share of the clean build.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import options  # noqa: E402
from measure import median  # noqa: E402


def parser(shell=False, prog=None):
    return options.parser(__doc__, ["runs", "jobs", "keep", "files"], shell, prog, files=1000)


def pipeline(source_dir):
    """One cached task per C file (compile), and the `brotli` tool (link), as Brotli's CMake build does."""
    sources = sorted(
        os.path.relpath(os.path.join(folder, name), source_dir)
        for folder, _, names in os.walk(os.path.join(source_dir, "c"))
        for name in names
        if name.endswith(".c") and "fuzz" not in folder
    )
    lines = ["version: 1", "defaults:", "  cache: true", "tasks:"]
    objects = []
    for source in sources:
        name = source[2:-2].replace("/", "-")
        obj = f"obj/{source[2:-2]}.o"
        objects.append(obj)
        lines += [
            f"  cc-{name}:",
            f"    run: mkdir -p {os.path.dirname(obj)} && cc -O2 -Ic/include -c {source} -o {obj}",
            f"    inputs: [{source}, \"c/**/*.h\"]",
            f"    outputs: [{obj}]",
        ]
    lines += [
        "  brotli:",
        "    needs: [" + ", ".join(f"cc-{s[2:-2].replace('/', '-')}" for s in sources) + "]",
        "    run: mkdir -p bin && cc -o bin/brotli " + " ".join(objects) + " -lm",
        "    inputs: [\"obj/**/*.o\"]",
        "    outputs: [bin/brotli]",
    ]
    print("\n".join(lines))
    return 0


def table(*times):
    med = [median([float(x) for x in arg.split()]) for arg in times]
    clean = med[0]
    rows = [
        ("clean build (--no-cache)", med[0], None),
        ("fresh clone, warm local cache", med[1], "≤ 5%"),
        ("fresh clone, empty local cache, nginx remote", med[2], "≤ 10%"),
    ]
    print(f"{'case':<46} {'wall':>8} {'of clean':>9} {'target':>7}")
    for name, wall, target in rows:
        share = f"{100 * wall / clean:.1f}%" if target else ""
        print(f"{name:<46} {wall:>7.3f}s {share:>9} {target or '':>7}")
    print(f"{'1,000 small output files from the remote':<46} {med[3]:>7.3f}s {'':>9} {'≤ 1 s':>7}")
    print(f"(median of {len(times[0].split())} runs; wall time of `jobgraph run`, process start to exit)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "pipeline":
        sys.exit(pipeline(sys.argv[2]))
    if len(sys.argv) == 6 and sys.argv[1] == "table":
        sys.exit(table(*sys.argv[2:]))
    sys.exit(__doc__)
