#!/usr/bin/env python3
"""The whole comparison in one table: jobgraph against the bare spawn loop, GNU make, ninja and go-task.

Called by ../table.sh, which installs the peers and builds jobgraph; run that instead. In one sitting:

  graphs    the --size (10,000) task layered, wide and chain graphs: a clean run (bench_graphs.py) and a
            no-op rerun of the same graph with declared files (noop_rerun.py), each tool's wall time and
            peak memory;
  large     the same for the --big-size (100,000) task layered graph, with --big-tools;
  validate  `jobgraph validate` of --validate-sizes task files (bench_validate.py), beside ninja loading
            the same graph (`ninja -t targets all`);
  startup   `jobgraph --version`.

Every figure is the median of --runs runs, the tools in alternation; peak memory is the largest maximum
resident set (GNU time's %M: the largest process of the tool's tree) of any run. The table gives
jobgraph's ratio to each peer (below 1: jobgraph is faster or smaller) and checks the targets of the
issue "Lead every peer on speed".
"""

import os
import platform
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_graphs  # noqa: E402
import bench_validate  # noqa: E402
import generate  # noqa: E402
import noop_rerun  # noqa: E402
import options  # noqa: E402
from measure import measure, median, scratch_folder  # noqa: E402

COLUMNS = ("floor", "make", "ninja", "task", "jobgraph")
TITLES = {"floor": "spawn loop", "make": "make", "ninja": "ninja", "task": "go-task", "jobgraph": "jobgraph"}
PEERS = ("floor", "make", "ninja", "task")


def parser(shell=False, prog=None):
    return options.parser(__doc__, ["jobgraph", "size", "shapes", "big_size", "tools", "big_tools", "validate_sizes",
                                    "parts", "runs", "jobs", "timeout", "dir", "keep", "markdown"], shell, prog)


def first_line(command):
    try:
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
        return result.stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "–"


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def load_average():
    with open("/proc/loadavg", encoding="utf-8") as load:
        return " ".join(load.read().split()[:3])


class Row:
    """One figure for every column: seconds or MiB, None where the tool failed or has nothing to show."""

    def __init__(self, label, unit, values, note=""):
        self.label, self.unit, self.values, self.note = label, unit, values, note


def fmt(value, unit):
    if value is None:
        return "–"
    if unit == "s":
        return f"{value:.3f} s" if value < 10 else f"{value:.1f} s"
    return f"{value:.0f} MB"


def ratio(row, peer):
    mine, theirs = row.values.get("jobgraph"), row.values.get(peer)
    return "–" if mine is None or not theirs else f"{mine / theirs:.2f}"


def graph_rows(shape, size, args, jobgraph, tools, workdir, failures):
    """A clean run and the no-op reruns of one graph: seven rows (clean s, first, commented, checked and later
    no-op rerun s, clean MB, no-op MB); noop_rerun.py says what the four reruns are."""
    commands = bench_graphs.commands(jobgraph, args.jobs)
    label = f"{shape} {size:,}"
    folder = os.path.join(workdir, f"{shape}-{size}")
    generate.main(["--shape", shape, "--size", str(size), "--out", folder, "--forms", forms(tools)])
    clean = bench_graphs.measure_graph(tools, commands, folder, size, args.runs, args.timeout, label, failures,
                                       peak_rss=True)
    noop_tools = [tool for tool in tools if tool in noop_rerun.TOOLS]
    noop_folder = folder + "-noop"
    noop_rerun.generate_graph(shape, size, noop_folder, noop_tools)
    noop, failed = noop_rerun.measure_noop(noop_tools, commands, noop_folder, size, args.runs, args.timeout,
                                           peak_rss=True, label=f"{label} no-op rerun")
    if failed:
        failures.append(f"{label}: a no-op rerun failed (see above)")
    if not args.keep:
        shutil.rmtree(folder)
        shutil.rmtree(noop_folder)
    return [
        Row(f"{label}, clean run", "s", {tool: clean[tool][0] for tool in tools}),
        *(Row(f"{label}, {kind} no-op rerun", "s", {tool: getattr(noop[tool], kind) for tool in noop})
          for kind in noop_rerun.ROUNDS),
        Row(f"{label}, clean run peak memory", "MB", {tool: clean[tool][1] for tool in tools}),
        Row(f"{label}, no-op rerun peak memory", "MB", {tool: noop[tool].peak_mb for tool in noop}),
    ]


def forms(tools):
    """generate.py's forms for these tools (the spawn loop reads `graph`)."""
    return ",".join("graph" if tool == "floor" else tool for tool in tools)


def validate_rows(sizes, args, jobgraph, workdir, failures):
    """`jobgraph validate` and `ninja -t targets all` of the same two-needs graph, for each size."""
    rows = []
    for size in sizes:
        folder = os.path.join(workdir, f"validate-{size}")
        generate.main(["--shape", "two-needs", "--size", str(size), "--out", folder, "--forms", "jobgraph,ninja"])
        figures = {}
        for tool, command in (("jobgraph", [jobgraph, "validate", "pipeline.yaml"]),
                              ("ninja", ["ninja", "-f", "build.ninja", "-t", "targets", "all"])):
            seconds, rss, statuses, results = bench_validate.measure_file(command, os.path.join(folder, tool), args.runs,
                                                                          timeout=args.timeout)
            if statuses != [0] or any(result.timed_out for result in results):
                failures.append(f"{tool} loading {size:,} tasks exited {statuses}: {results[-1].stderr_tail.strip()[-500:]}")
                seconds = rss = None
            figures[tool] = (seconds, rss)
            print(f"  validate {size:,}: {tool:9} {fmt(seconds, 's')}, {fmt(rss, 'MB')}", file=sys.stderr, flush=True)
        if not args.keep:
            shutil.rmtree(folder)
        rows.append((size, figures))
    return rows


def startup_seconds(jobgraph, workdir, runs):
    results = [measure([jobgraph, "--version"], workdir, timeout=60) for _ in range(runs)]
    if any(result.status != 0 for result in results):
        return None
    return median([result.seconds for result in results])


def targets(rows_by_label, validate, startup, size, big_size):
    """The issue's targets that were measured: (target, what was measured, whether it is met)."""
    checks = []

    def value(label, tool):
        row = rows_by_label.get(label)
        return None if row is None else row.values.get(tool)

    def check(text, measured, limit, shown):
        if measured is not None:
            checks.append((text, shown(measured), measured <= limit))

    def check_ratio(text, label, peer, limit):
        mine, theirs = value(label, "jobgraph"), value(label, peer)
        check(text, None if mine is None or not theirs else mine / theirs, limit,
              lambda ratio: f"{ratio:.2f}× {TITLES[peer]}")

    seconds = lambda value: fmt(value, "s")  # noqa: E731
    megabytes = lambda value: fmt(value, "MB")  # noqa: E731
    # Issue 31's targets ("One path through the engine").
    for shape in ("layered", "wide"):
        label = f"{shape} {size:,}, clean run"
        check_ratio(f"{label}: at most 1.0× make", label, "make", 1.0)
        check_ratio(f"{label}: at most 1.1× the spawn loop", label, "floor", 1.1)
    label = f"chain {size:,}, clean run"
    check_ratio(f"{label}: at most 1.1× the spawn loop", label, "floor", 1.1)
    # The first rerun after a build is the one users meet most; a commented one follows an edit of the pipeline's
    # comments, a checked one an edit of its YAML content that changes no task, and a later one the rerun before.
    # jobgraph checks every task in each (one code path).
    for kind in noop_rerun.ROUNDS:
        label = f"layered {size:,}, {kind} no-op rerun"
        check_ratio(f"{label}: at most 1.5× ninja", label, "ninja", 1.5)
    for kind in noop_rerun.ROUNDS:
        label = f"layered {big_size:,}, {kind} no-op rerun"
        check(f"{label}: at most 0.5 s", value(label, "jobgraph"), 0.5, seconds)
    label = f"layered {big_size:,}, clean run peak memory"
    check(f"{label}: at most 150 MB", value(label, "jobgraph"), 150, megabytes)
    by_size = {size: figures["jobgraph"] for size, figures in validate}
    million = by_size.get(1_000_000, (None, None))
    check("validate 1,000,000 tasks: within 3.5 s", million[0], 3.5, seconds)
    check("validate 1,000,000 tasks: within 700 MB", million[1], 700, megabytes)
    check("validate 10,000 tasks: under 0.05 s", by_size.get(10_000, (None, None))[0], 0.05, seconds)
    check("start-up (`--version`): under 20 ms", startup, 0.020, lambda value: f"{value * 1000:.1f} ms")
    return checks


def render(header_lines, rows, validate, startup, startup_runs, checks, markdown):
    """The table as text lines: Markdown, or columns aligned for a terminal."""
    def table(head, body):
        if markdown:
            return ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"] + \
                   ["| " + " | ".join(cells) + " |" for cells in body]
        widths = [max(len(cells[i]) for cells in [head] + body) for i in range(len(head))]
        line = lambda cells: "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)  # noqa: E731
                                       for i, (cell, w) in enumerate(zip(cells, widths)))
        return [line(head), "  ".join("-" * w for w in widths)] + [line(cells) for cells in body]

    lines = list(header_lines)
    if rows:
        # The tools measured (a tool that failed keeps its column, of –).
        columns = [tool for tool in COLUMNS if any(tool in row.values for row in rows)]
        peers = [tool for tool in PEERS if tool in columns]
        head = ["figure"] + [TITLES[tool] for tool in columns] + [f"jobgraph / {TITLES[peer]}" for peer in peers]
        body = [[row.label] + [fmt(row.values.get(tool), row.unit) for tool in columns]
                + [ratio(row, peer) for peer in peers] for row in rows]
        lines += [""] + table(head, body)
    if validate:
        head = ["loading the graph", "jobgraph validate", "peak memory", "ninja -t targets all", "peak memory",
                "jobgraph / ninja time", "jobgraph / ninja memory"]
        body = []
        for size, figures in validate:
            (mine_s, mine_mb), (ninja_s, ninja_mb) = figures["jobgraph"], figures["ninja"]
            body.append([f"{size:,} tasks", fmt(mine_s, "s"), fmt(mine_mb, "MB"), fmt(ninja_s, "s"), fmt(ninja_mb, "MB"),
                         "–" if mine_s is None or not ninja_s else f"{mine_s / ninja_s:.2f}",
                         "–" if mine_mb is None or not ninja_mb else f"{mine_mb / ninja_mb:.2f}"])
        lines += [""] + table(head, body)
    if startup is not None:
        lines += ["", f"Start-up, `jobgraph --version`: {startup * 1000:.1f} ms (median of {startup_runs} runs)."]
    if checks:
        body = [[text, shown, "met" if met else "MISSED"] for text, shown, met in checks]
        lines += [""] + table(["target", "measured", "verdict"], body)
    return lines


def main(argv):
    args = parser().parse_args(argv)
    jobgraph = os.path.abspath(args.jobgraph)
    started = time.time()
    load_at_start = load_average()
    tools = [tool for tool in COLUMNS if tool in args.tools]
    big_tools = [tool for tool in COLUMNS if tool in args.big_tools]
    workdir = scratch_folder("jobgraph-table-", args.dir)
    failures, rows, validate, startup = [], [], [], None
    startup_runs = max(20, args.runs)

    def publish(rows, validate, startup, done=None):
        """The table so far: printed and written to --markdown at the end, only written after a part (`done`)."""
        measuring = f"{time.time() - started:.0f} s to measure" if done is None else f"partial: measured up to {done}"
        header = [
            f"jobgraph benchmark table, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))} ({measuring})",
            f"machine: {len(os.sched_getaffinity(0))} CPUs (nproc), {cpu_model()}, {platform.system()} "
            f"{platform.release()}; load average {load_at_start} at start, {load_average()} at end",
            f"tools: jobgraph {first_line([jobgraph, '--version'])} ({jobgraph}); ninja {first_line(['ninja', '--version'])}; "
            f"{first_line(['make', '--version'])}; go-task {first_line(['task', '--version'])}",
            f"work folder in {os.path.dirname(workdir)}; --jobs {args.jobs}; every task `touch out/ID`; median of "
            f"{args.runs} run(s), the tools in alternation; peak memory: the largest max RSS (GNU time %M, the largest "
            "process of the tool's tree) of any run; the spawn loop is lib/spawn_floor.py (its memory is Python's); "
            "ratio = jobgraph / peer.",
        ]
        checks = targets({row.label: row for row in rows}, validate, startup, args.size, args.big_size)
        if done is None:
            print()
            print("\n".join(render(header, rows, validate, startup, startup_runs, checks, markdown=False)))
        if args.markdown:
            with open(args.markdown, "w", encoding="utf-8") as file:
                file.write(f"**{header[0]}**\n\n" + "".join(f"- {line}\n" for line in header[1:]))
                file.write("\n".join(render([], rows, validate, startup, startup_runs, checks, markdown=True)) + "\n")
            if done is None:
                print(f"\nMarkdown written to {args.markdown}", file=sys.stderr)

    try:
        problems = bench_graphs.preflight(sorted(set(tools) | set(big_tools)), bench_graphs.commands(jobgraph, args.jobs),
                                          workdir, timeout=60)
        if "validate" in args.parts:
            problems += bench_validate.preflight(jobgraph, os.path.join(workdir, "validate"))
        if problems:
            bench_graphs.report("table.sh: a tool failed on a 3-task graph, so no figures would mean anything:", problems)
            return 1
        # The quick parts first; the Markdown file is rewritten after each, so an interrupted sitting leaves
        # what it measured.
        if "graphs" in args.parts:
            for shape in args.shapes:
                rows += graph_rows(shape, args.size, args, jobgraph, tools, workdir, failures)
                publish(rows, validate, startup, done=f"{shape} {args.size:,}")
        if "startup" in args.parts:
            startup = startup_seconds(jobgraph, workdir, startup_runs)
            if startup is None:
                failures.append("`jobgraph --version` failed")
        if "validate" in args.parts:
            validate = validate_rows(args.validate_sizes, args, jobgraph, workdir, failures)
            publish(rows, validate, startup, done="validate")
        if "large" in args.parts:
            rows += graph_rows("layered", args.big_size, args, jobgraph, big_tools, workdir, failures)
    finally:
        if args.keep:
            print(f"generated files kept in {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)

    publish(rows, validate, startup)
    if failures:
        bench_graphs.report("\nFailed (shown as –):", failures)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
