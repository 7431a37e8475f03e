#!/usr/bin/env python3
"""No-op rerun: how long jobgraph, ninja and GNU make take to find that nothing needs doing.

The same layered graph (generate.py, fixed seed) in each tool's format, every task `touch out/ID` with
its needs' outputs as inputs: jobgraph's tasks declare `inputs` and `outputs`, ninja's edges have
implicit dependencies, make's rules prerequisites. Each tool first builds the graph (timed, for
information), then reruns it `--runs` times; the figure is the median rerun. A rerun counts only if the
tool exits 0 and no file in `out/` changed (so it really did no work).

    noop_rerun.py --jobgraph PATH [--size 10000] [--runs 3] [--jobs 2] [--keep]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure import scratch_folder  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def commands(jobgraph, jobs):
    return {
        "jobgraph": [jobgraph, "run", "pipeline.yaml", "--jobs", str(jobs), "--progress", "plain"],
        "ninja": ["ninja", f"-j{jobs}"],
        "make": ["make", f"-j{jobs}", "-f", "Makefile", "all"],
    }


def snapshot(folder):
    """Each output's modification time in nanoseconds: a rerun that touched anything changes it."""
    out = os.path.join(folder, "out")
    with os.scandir(out) as entries:
        return {entry.name: entry.stat().st_mtime_ns for entry in entries}


def timed(command, folder):
    began = time.perf_counter()
    result = subprocess.run(command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return time.perf_counter() - began, result


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobgraph", required=True)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--dir", help="where the work folder goes (default: /dev/shm when writable, else the temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args(argv)

    work = scratch_folder("jobgraph-noop-", args.dir)
    subprocess.run([sys.executable, os.path.join(HERE, "generate.py"), "--shape", "layered", "--size", str(args.size),
                    "--out", work, "--forms", "jobgraph,ninja,make", "--declare-files"], check=True)
    figures = {}
    failed = False
    try:
        for tool, command in commands(args.jobgraph, args.jobs).items():
            folder = os.path.join(work, tool)
            os.makedirs(os.path.join(folder, "out"), exist_ok=True)
            build_time, result = timed(command, folder)
            before = snapshot(folder)
            if result.returncode != 0 or len(before) != args.size:
                print(f"noop_rerun.py: {tool}'s first build exited {result.returncode} with {len(before)} of "
                      f"{args.size} outputs:\n{result.stderr[-2000:]}", file=sys.stderr)
                failed = True
                continue
            reruns = []
            for _ in range(args.runs):
                seconds, result = timed(command, folder)
                changed = sum(1 for name, mtime in snapshot(folder).items() if before.get(name) != mtime)
                if result.returncode != 0 or changed:
                    print(f"noop_rerun.py: {tool}'s rerun exited {result.returncode} and changed {changed} outputs:\n"
                          f"{result.stdout[-1000:]}{result.stderr[-1000:]}", file=sys.stderr)
                    failed = True
                    break
                reruns.append(seconds)
            if tool == "jobgraph" and reruns:
                # Plain progress names every task's end: all must be up to date.
                ended = [line for line in result.stdout.splitlines() if "-> up-to-date" in line]
                if len(ended) != args.size:
                    print(f"noop_rerun.py: jobgraph's rerun reported {len(ended)} of {args.size} tasks up to date",
                          file=sys.stderr)
                    failed = True
            if len(reruns) == args.runs:
                figures[tool] = (build_time, statistics.median(reruns), reruns)
            print(f"== {tool}: first build {build_time:.2f}s, reruns " + ", ".join(f"{s:.3f}s" for s in reruns),
                  file=sys.stderr)
    finally:
        if args.keep:
            print(f"== kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)

    print()
    print(f"no-op rerun of the {args.size}-task layered graph (median of {args.runs}), --jobs {args.jobs}")
    print("| tool | first build s | no-op rerun s | jobgraph / tool |")
    print("|---|---|---|---|")
    mine = figures.get("jobgraph", (None, None))[1]
    for tool in ("jobgraph", "ninja", "make"):
        if tool not in figures:
            print(f"| {tool} | – | – | – |")
            continue
        build, rerun, _ = figures[tool]
        ratio = f"{mine / rerun:.1f}" if mine is not None and rerun > 0 else "–"
        print(f"| {tool} | {build:.2f} | {rerun:.3f} | {ratio} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
