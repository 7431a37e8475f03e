#!/usr/bin/env bash
# Runs the same task graphs through jobgraph, ninja, GNU make and go-task and prints their times side
# by side, with ratios and per-task overhead over a bare posix_spawn loop. See Benchmarks/README.md.
#
#   Benchmarks/run-graphs.sh [--sizes 1000,10000] [--shapes wide,chain,layered] [--runs 3] [--dir DIR]
#                            [--tools floor,jobgraph,ninja,make,task] [--jobs 2] [--keep] [--no-build]
#
# JOBGRAPH=/path/to/jobgraph measures that binary instead of building one.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/Benchmarks/lib/common.sh"

parse_options bench_graphs "$@"
ensure_peers "$opt_tools"
jobgraph=/nonexistent
if [[ ,$opt_tools, == *,jobgraph,* ]]; then find_jobgraph "$skip_build"; fi

note_tools
exec python3 "$root/Benchmarks/lib/bench_graphs.py" --jobgraph "$jobgraph" "${passed[@]}"
