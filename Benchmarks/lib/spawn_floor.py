#!/usr/bin/env python3
"""The floor under every tool: runs a graph's `touch out/tNNNNN` commands with nothing but
os.posix_spawn and os.waitpid, at most JOBS at once, each task once all its needs have finished.

    spawn_floor.py GRAPH_JSON [--jobs 2]      # GRAPH_JSON from generate.py (DIR/floor/graph.json)

No scheduler can start a process for less than this: what a tool takes beyond it is its own
overhead. Prints the loop's own wall time in seconds on stdout (Python's start-up, about 0.1 s,
is no part of the floor). Exits 1 if any command fails.
"""

import argparse
import collections
import json
import os
import shutil
import sys
import time


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("graph")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)

    with open(args.graph, encoding="utf-8") as file:
        graph = json.load(file)
    ids, needs = graph["ids"], graph["needs"]
    touch = shutil.which("touch")
    if touch is None:
        print("spawn_floor.py: no 'touch' on PATH", file=sys.stderr)
        return 2

    waiting_for = [len(task_needs) for task_needs in needs]
    dependents = [[] for _ in ids]
    for task, task_needs in enumerate(needs):
        for need in task_needs:
            dependents[need].append(task)
    start = time.perf_counter()
    ready = collections.deque(task for task, count in enumerate(waiting_for) if count == 0)
    running = {}
    failures = 0
    environment = dict(os.environ)
    while ready or running:
        while ready and len(running) < args.jobs:
            task = ready.popleft()
            pid = os.posix_spawn(touch, ["touch", f"out/{ids[task]}"], environment)
            running[pid] = task
        pid, status = os.waitpid(-1, 0)
        task = running.pop(pid)
        if os.waitstatus_to_exitcode(status) != 0:
            failures += 1
            continue
        for dependent in dependents[task]:
            waiting_for[dependent] -= 1
            if waiting_for[dependent] == 0:
                ready.append(dependent)
    print(f"{time.perf_counter() - start:.6f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
