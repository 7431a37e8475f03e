#!/usr/bin/env python3
"""A second Ctrl-C: how long jobgraph takes to end a task that ignores SIGTERM once SIGINT comes again.

The contract: the first SIGINT sends each running task SIGTERM and SIGKILL 5 s later; a second SIGINT
kills at once. The task here ignores SIGTERM, so only the second SIGINT can end it before the grace runs
out. Each run starts `jobgraph run`, waits for the task's first line, sends SIGINT, waits for the
announcement, sends SIGINT again and times the exit. This is a wall-clock figure, so it lives here and
not in the unit tests (Tests/JobGraphCLITests/SignalTests.swift checks the rest: status 130, nothing left).

    signal_latency.py --jobgraph PATH [--runs 5]

Prints the seconds from the second SIGINT to jobgraph's exit for each run and their median; exits 1
if a run did not end with status 130 or took 4.5 s or more (the grace, not the second SIGINT, ended it).
"""

import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import options  # noqa: E402


def one_run(jobgraph, folder, marker):
    with open(os.path.join(folder, "p.yaml"), "w") as file:
        file.write(f"version: 1\ntasks:\n  stubborn: {{run: \"trap '' TERM; echo up; exec sleep {marker}\"}}\n")
    process = subprocess.Popen([jobgraph, "run", "p.yaml", "--progress", "plain"], cwd=folder, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)

    def wait_for(text):
        for line in process.stdout:
            if text in line:
                return True
        return False

    if not wait_for("stubborn | up"):
        return None, process.wait()
    process.send_signal(signal.SIGINT)
    if not wait_for("interrupted (SIGINT)"):
        return None, process.wait()
    began = time.monotonic()
    process.send_signal(signal.SIGINT)
    process.stdout.read()
    status = process.wait()
    return time.monotonic() - began, status


def parser(shell=False, prog=None):
    return options.parser(__doc__, ["jobgraph", "runs"], shell, prog, runs=5)


def main(argv):
    args = parser().parse_args(argv)

    folder = tempfile.mkdtemp(prefix="jobgraph-signal-")
    failures = 0
    seconds = []
    try:
        for run in range(args.runs):
            elapsed, status = one_run(args.jobgraph, folder, f"300.{os.getpid()}{run}")
            shown = "never reached the second SIGINT" if elapsed is None else f"{elapsed:.3f} s"
            print(f"run {run + 1}: {shown}, exit {status}", flush=True)
            if elapsed is None or status != 130 or elapsed >= 4.5:
                failures += 1
            else:
                seconds.append(elapsed)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if seconds:
        print(f"second SIGINT to exit: median {statistics.median(seconds):.3f} s over {len(seconds)} runs")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
