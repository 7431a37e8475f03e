#!/usr/bin/env python3
"""The options of slurm.sh, whose measuring is in the shell script itself: per-task overhead of running on
Slurm, each mode against the local executor on the same graph (1,000 no-op tasks, then 200 tasks of 0.5 s,
all independent, on a one-node local cluster with as many CPUs declared as --jobs).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import options  # noqa: E402


def parser(shell=False, prog=None):
    return options.parser(__doc__, ["noop", "sleepers", "jobs", "modes"], shell, prog, jobs=8)


if __name__ == "__main__":
    parser().parse_args(sys.argv[1:])
