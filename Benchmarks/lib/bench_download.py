#!/usr/bin/env python3
"""The table of ../download.sh, which does the measuring in the shell: run that instead.

    bench_download.py table SIZE_MB FILES "LARGE_JOBGRAPH_TIMES" "LARGE_CURL_TIMES" "SMALL_JOBGRAPH_TIMES" "SMALL_CURL_TIMES"

Each *_TIMES is the seconds of every run, separated by spaces; the table shows their medians and ratios.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import options  # noqa: E402
from measure import median  # noqa: E402


def parser(shell=False, prog=None):
    return options.parser(__doc__, ["size_mb", "files", "runs", "keep"], shell, prog)


def table(size_mb, files, *times):
    med = [median([float(x) for x in arg.split()]) for arg in times]
    rows = [(f"one file of {size_mb} MB", med[0], med[1]), (f"{files} files of 10 KB, 4 at a time", med[2], med[3])]
    print(f"{'case':<34} {'jobgraph':>9} {'curl':>9} {'ratio':>7}")
    for name, ours, theirs in rows:
        print(f"{name:<34} {ours:>8.3f}s {theirs:>8.3f}s {ours / theirs:>6.2f}x")
    print(f"(median of {len(times[0].split())} runs; jobgraph's figure includes reading the pipeline and fsync before rename)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 8 or sys.argv[1] != "table":
        sys.exit(__doc__)
    sys.exit(table(*sys.argv[2:]))
