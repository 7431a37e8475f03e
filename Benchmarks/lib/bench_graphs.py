#!/usr/bin/env python3
"""Runs the same generated task graphs through jobgraph, ninja, GNU make and go-task side by side.

Called by ../run-graphs.sh, which installs the peers and builds jobgraph; run that instead. Each
tool runs from a clean folder every time (no out/, no state files), at 2 jobs, and must create
every output file: a run that silently did less is reported as a failure, not a time.
"""

import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402
import options  # noqa: E402
from measure import measure, median, scratch_folder  # noqa: E402

LIB = os.path.dirname(os.path.abspath(__file__))
TOOLS = ("floor", "jobgraph", "ninja", "make", "task")
PEERS = ("ninja", "make", "task")
# What each tool leaves behind that could let a later run skip work.
STATE = ("out", ".jobgraph", ".ninja_log", ".ninja_deps", ".task")


def commands(jobgraph, jobs):
    return {
        "floor": [sys.executable, os.path.join(LIB, "spawn_floor.py"), "graph.json", "--jobs", str(jobs)],
        "jobgraph": [jobgraph, "run", "pipeline.yaml", "--jobs", str(jobs), "--progress", "plain"],
        "ninja": ["ninja", f"-j{jobs}", "-f", "build.ninja"],
        "make": ["make", f"-j{jobs}", "-f", "Makefile", "all"],
        "task": ["task", "--concurrency", str(jobs), "--silent", "--taskfile", "Taskfile.yml", "default"],
    }


def clean(folder):
    for name in STATE:
        path = os.path.join(folder, name)
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.exists(path):
            os.remove(path)
    os.mkdir(os.path.join(folder, "out"))


class ToolFailed(Exception):
    pass


def run_once(tool, command, folder, size, timeout, peak_rss=False):
    """One clean run: (wall seconds, peak RSS in MiB or 0 unless `peak_rss`)."""
    clean(folder)
    result = measure(command, folder, timeout=timeout, keep_stdout=tool == "floor", peak_rss=peak_rss)
    if result.timed_out:
        raise ToolFailed(f"{tool} did not finish within {timeout:g} s")
    if result.status != 0:
        raise ToolFailed(f"{tool} exited with status {result.status}:\n{result.stderr_tail.strip()}")
    created = len(os.listdir(os.path.join(folder, "out")))
    if created != size:
        raise ToolFailed(
            f"{tool} exited 0 but created {created} of {size} output files"
            + (f"; its stderr:\n{result.stderr_tail.strip()}" if result.stderr_tail.strip() else ""))
    if tool == "floor":
        # The floor times its own spawn loop, leaving out the interpreter's start-up.
        return float(result.stdout.split()[-1]), result.peak_rss_mb
    return result.seconds, result.peak_rss_mb


def measure_graph(tools, all_commands, folder, size, runs, timeout, label, failures, peak_rss=False):
    """Runs every tool `runs` times on the graph generated in `folder`, in alternation (a b c a b c ...), so
    that a change in the machine's speed falls on all of them alike. A failed tool is not run again.

    Returns {tool: (median seconds, largest peak RSS MiB)}, (None, None) for a tool that failed; appends
    what went wrong to `failures`.
    """
    times = {tool: [] for tool in tools}
    rss = {tool: 0.0 for tool in tools}
    failed = set()
    for run in range(runs):
        for tool in tools:
            if tool in failed:
                continue
            try:
                seconds, peak = run_once(tool, all_commands[tool], os.path.join(folder, tool), size, timeout, peak_rss)
            except ToolFailed as failure:
                failures.append(f"{label}: {failure}")
                failed.add(tool)
                continue
            times[tool].append(seconds)
            rss[tool] = max(rss[tool], peak)
            memory = f", {peak:.0f} MB" if peak_rss else ""
            print(f"  {label} run {run + 1}: {tool:9} {seconds:.3f} s{memory}", file=sys.stderr, flush=True)
    return {tool: (None, None) if tool in failed else (median(times[tool]), rss[tool]) for tool in tools}


def preflight(tools, all_commands, workdir, timeout):
    """A 3-task graph through each tool, so a tool that does nothing is caught in a second, not after an hour."""
    folder = os.path.join(workdir, "preflight")
    generate.main(["--shape", "layered", "--size", "3", "--out", folder])
    problems = []
    for tool in tools:
        try:
            run_once(tool, all_commands[tool], os.path.join(folder, tool), 3, timeout)
        except ToolFailed as failure:
            problems.append(str(failure))
        except FileNotFoundError as missing:
            problems.append(f"{tool}: cannot start {missing.filename!r}")
    return problems


def report(title, problems):
    """Prints `title` and each problem under it, indented, on stderr."""
    print(title, file=sys.stderr)
    for problem in problems:
        print("  " + problem.replace("\n", "\n    "), file=sys.stderr)


def fmt_seconds(value):
    return "–" if value is None else f"{value:.3f}"


def fmt_ratio(a, b):
    return "–" if a is None or b is None or b == 0 else f"{a / b:.2f}"


def fmt_overhead(wall, floor, size):
    return "–" if wall is None or floor is None else f"{(wall - floor) / size * 1000:.3f}"


def parser(shell=False, prog=None):
    return options.parser(__doc__, ["jobgraph", "sizes", "shapes", "runs", "jobs", "tools", "timeout", "dir", "keep"],
                          shell, prog)


def main(argv):
    args = parser().parse_args(argv)
    sizes, shapes, tools = args.sizes, args.shapes, list(args.tools)
    if "floor" not in tools:
        tools.insert(0, "floor")  # every overhead is measured against it

    all_commands = commands(os.path.abspath(args.jobgraph), args.jobs)
    workdir = scratch_folder("jobgraph-bench-", args.dir)
    try:
        problems = preflight(tools, all_commands, workdir, timeout=60)
        if problems:
            report("run-graphs: a tool failed on a 3-task graph, so no figures would mean anything:", problems)
            return 1

        rows, failures = [], []
        for shape in shapes:
            for size in sizes:
                folder = os.path.join(workdir, f"{shape}-{size}")
                generate.main(["--shape", shape, "--size", str(size), "--out", folder])
                figures = measure_graph(tools, all_commands, folder, size, args.runs, args.timeout,
                                        f"{shape} {size}", failures)
                wall = {tool: seconds for tool, (seconds, _) in figures.items()}
                rows.append((shape, size, wall))
                if not args.keep:
                    shutil.rmtree(folder)

        peers = [tool for tool in PEERS if tool in tools]
        jobgraph_on = "jobgraph" in tools
        header = ["shape", "tasks", "floor s"] + [f"{tool} s" for tool in tools if tool != "floor"]
        if jobgraph_on:
            header += [f"jobgraph/{peer}" for peer in peers]
        header += [f"{tool} ms/task" for tool in tools if tool != "floor"]
        print()
        print(f"Median wall time of {args.runs} run(s), --jobs {args.jobs}, every task `touch out/tNNNNN`;")
        print("ms/task = (wall - floor) / tasks: each tool's cost per task above a bare posix_spawn loop.")
        print()
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---" for _ in header) + "|")
        for shape, size, wall in rows:
            cells = [shape, str(size), fmt_seconds(wall["floor"])]
            cells += [fmt_seconds(wall[tool]) for tool in tools if tool != "floor"]
            if jobgraph_on:
                cells += [fmt_ratio(wall["jobgraph"], wall[peer]) for peer in peers]
            cells += [fmt_overhead(wall[tool], wall["floor"], size) for tool in tools if tool != "floor"]
            print("| " + " | ".join(cells) + " |")
        if failures:
            report("\nFailed runs (shown as –):", failures)
            return 1
        return 0
    finally:
        if args.keep:
            print(f"\ngenerated files kept in {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
