#!/usr/bin/env python3
"""No-op rerun: how long jobgraph, ninja, GNU make and go-task take to find that nothing needs doing.

The same layered graph (generate.py, fixed seed) in each tool's format, every task `touch out/ID` with
its needs' outputs as inputs: jobgraph's tasks declare `inputs` and `outputs`, ninja's edges have
implicit dependencies, make's rules prerequisites, go-task's tasks `sources` and `generates`. Each tool
first builds the graph (timed, for information), then reruns it, the tools in alternation, in four rounds
of `--runs` reruns each. jobgraph takes one path in every round: it loads the file and checks every task
(docs/state.md); the rounds differ in what came before the rerun.

  first      the rerun a user makes right after a build. Before each of these reruns but the first,
             jobgraph's outputs are deleted and it builds the graph again (not timed).
  commented  a rerun after a comment line was added to each tool's build file (a new one each time): other
             bytes that say the same.
  checked    a rerun after a change to each tool's build file that changes no task: for jobgraph a new
             anchor on `version` (other YAML content, the same pipeline), for the others a comment.
  later      the same command again, the file unchanged, after a rerun that found every task up to date.

The other tools are not built again; each round measures the same work for them. The figures are the
median of each round. A rerun counts only if the tool exits 0 and no file in `out/` changed (so it
really did no work).

    noop_rerun.py --jobgraph PATH [--size 10000] [--runs 3] [--jobs 2] [--tools jobgraph,ninja,make] [--keep]
"""

import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import options  # noqa: E402
from bench_graphs import commands  # noqa: E402
from measure import measure, median, scratch_folder  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = ("jobgraph", "ninja", "make", "task")  # the spawn loop has nothing to skip
BUILD_FILES = {"jobgraph": "pipeline.yaml", "ninja": "build.ninja", "make": "Makefile", "task": "Taskfile.yml"}
ROUNDS = ("first", "commented", "checked", "later")


def snapshot(folder):
    """Each output's modification time in nanoseconds: a rerun that touched anything changes it."""
    out = os.path.join(folder, "out")
    with os.scandir(out) as entries:
        return {entry.name: entry.stat().st_mtime_ns for entry in entries}


def generate_graph(shape, size, work, tools):
    """Writes the graph with declared files for `tools` into work/TOOL/."""
    subprocess.run([sys.executable, os.path.join(HERE, "generate.py"), "--shape", shape, "--size", str(size),
                    "--out", work, "--forms", ",".join(tools), "--declare-files"], check=True)


def measure_noop(tools, all_commands, work, size, runs, timeout=900, peak_rss=False, label="no-op rerun"):
    """Builds the graph generate_graph wrote in `work` with each tool, then reruns it in the two rounds the
    module's description names, `runs` reruns each, the tools in alternation. Returns ({tool: NoOpFigures}
    for the tools whose every rerun was a true no-op, whether any tool failed)."""
    tools = [tool for tool in tools if tool in TOOLS]
    builds, before, rss = {}, {}, {tool: 0.0 for tool in tools}
    reruns = {tool: {kind: [] for kind in ROUNDS} for tool in tools}
    failed = set()
    for tool in tools:
        folder = os.path.join(work, tool)
        os.makedirs(os.path.join(folder, "out"), exist_ok=True)
        result = measure(all_commands[tool], folder, timeout=timeout)
        before[tool] = snapshot(folder)
        if result.status != 0 or result.timed_out or len(before[tool]) != size:
            print(f"{label}: {tool}'s first build exited {result.status} with {len(before[tool])} of "
                  f"{size} outputs:\n{result.stderr_tail}", file=sys.stderr)
            failed.add(tool)
            continue
        builds[tool] = result.seconds
        print(f"  {label}: {tool:9} first build {result.seconds:.2f} s", file=sys.stderr, flush=True)
    rounds = ([("first", number) for number in range(runs)] + [("commented", runs + number) for number in range(runs)]
              + [("checked", 2 * runs + number) for number in range(runs)] + [("later", 3 * runs - 1)] * runs)
    for kind, number in rounds:
        for tool in tools:
            if tool in failed:
                continue
            folder = os.path.join(work, tool)
            if tool == "jobgraph" and kind == "first" and number > 0 and not rebuild(tool, all_commands, folder,
                                                                                  before, size, timeout, label):
                failed.add(tool)
                continue
            if kind == "commented" or (kind == "checked" and tool != "jobgraph"):
                # Every comment is new, so the file differs from the one the last run read.
                with open(os.path.join(folder, BUILD_FILES[tool]), "a") as build_file:
                    build_file.write(f"# {kind} rerun {number}\n")
            elif kind == "checked":
                restate_version(os.path.join(folder, BUILD_FILES[tool]), f"checked{number}")
            result = measure(all_commands[tool], folder, timeout=timeout, keep_stdout=True, peak_rss=peak_rss)
            changed = sum(1 for name, mtime in snapshot(folder).items() if before[tool].get(name) != mtime)
            if result.status != 0 or result.timed_out or changed:
                print(f"{label}: {tool}'s rerun exited {result.status} and changed {changed} outputs:\n"
                      f"{result.stdout[-1000:]}{result.stderr_tail[-1000:]}", file=sys.stderr)
                failed.add(tool)
                continue
            if tool == "jobgraph":
                # Plain progress prints no line for a task found up to date before the run; the summary
                # counts them ("10000 up-to-date in 0.05s"): all must be up to date.
                if not any(line.startswith(f"{size} up-to-date in ") for line in result.stdout.splitlines()):
                    print(f"{label}: jobgraph's rerun did not report all {size} tasks up to date:\n"
                          f"{result.stdout[-1000:]}", file=sys.stderr)
                    failed.add(tool)
                    continue
            reruns[tool][kind].append(result.seconds)
            rss[tool] = max(rss[tool], result.peak_rss_mb)
            memory = f", {result.peak_rss_mb:.0f} MB" if peak_rss else ""
            print(f"  {label}: {tool:9} {kind} rerun {result.seconds:.3f} s{memory}", file=sys.stderr, flush=True)
    figures = {tool: NoOpFigures(builds[tool], *(median(reruns[tool][kind]) for kind in ROUNDS), rss[tool])
               for tool in tools if tool not in failed}
    return figures, bool(failed)


def restate_version(path, anchor):
    """Puts `&anchor` on the pipeline's `version` (in place of any anchor there): other YAML content, but the
    same pipeline, so no task changes."""
    with open(path) as file:
        text = file.read()
    restated, count = re.subn(r"^version: (&\S+ )?", f"version: &{anchor} ", text, count=1, flags=re.M)
    if count != 1:
        raise SystemExit(f"{path} has no 'version:' line")
    with open(path, "w") as file:
        file.write(restated)


def rebuild(tool, all_commands, folder, before, size, timeout, label):
    """Deletes the tool's outputs and builds the graph again; notes the new outputs in `before`. Returns
    whether the build made every output."""
    out = os.path.join(folder, "out")
    for name in os.listdir(out):
        os.remove(os.path.join(out, name))
    result = measure(all_commands[tool], folder, timeout=timeout)
    before[tool] = snapshot(folder)
    if result.status != 0 or result.timed_out or len(before[tool]) != size:
        print(f"{label}: {tool}'s build exited {result.status} with {len(before[tool])} of {size} outputs:\n"
              f"{result.stderr_tail}", file=sys.stderr)
        return False
    print(f"  {label}: {tool:9} build again {result.seconds:.2f} s", file=sys.stderr, flush=True)
    return True


class NoOpFigures:
    """One tool's no-op figures: the build before (s), the median first, commented, checked and later rerun
    (s), the largest rerun's peak memory (MiB)."""

    def __init__(self, build, first, commented, checked, later, peak_mb):
        self.build, self.first, self.commented, self.checked, self.later = build, first, commented, checked, later
        self.peak_mb = peak_mb


def parser(shell=False, prog=None):
    return options.parser(__doc__, ["jobgraph", "size", "runs", "jobs", "tools", "dir", "keep"], shell, prog,
                          tools="jobgraph,ninja,make")


def main(argv):
    args = parser().parse_args(argv)
    tools = [tool for tool in args.tools if tool in TOOLS]
    all_commands = commands(os.path.abspath(args.jobgraph), args.jobs)

    work = scratch_folder("jobgraph-noop-", args.dir)
    try:
        generate_graph("layered", args.size, work, tools)
        figures, failed = measure_noop(tools, all_commands, work, args.size, args.runs)
    finally:
        if args.keep:
            print(f"== kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)

    print()
    print(f"no-op rerun of the {args.size}-task layered graph (median of {args.runs} per round), --jobs {args.jobs}")
    print("| tool | first build s | first rerun s | commented rerun s | checked rerun s | later reruns s "
          "| jobgraph / tool, first | commented | checked | later |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    mine = figures.get("jobgraph")
    for tool in tools:
        if tool not in figures:
            print(f"| {tool} | – | – | – | – | – | – | – | – | – |")
            continue
        theirs = figures[tool]
        ratios = [f"{getattr(mine, kind) / getattr(theirs, kind):.1f}" if mine is not None and getattr(theirs, kind) > 0
                  else "–" for kind in ROUNDS]
        print(f"| {tool} | {theirs.build:.2f} | " + " | ".join(f"{getattr(theirs, kind):.3f}" for kind in ROUNDS) + " | "
              + " | ".join(ratios) + " |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
