#!/usr/bin/env bash
# The whole comparison in one table: the bare spawn loop, GNU make, ninja, go-task and jobgraph on
# 10,000-task layered, wide and chain graphs (clean run, no-op rerun, peak memory) and the 100,000-task
# layered graph, `jobgraph validate` of 10k, 100k and 1M tasks beside `ninja -t targets all`, and
# start-up; jobgraph's ratio to each peer and the issue's targets. See Benchmarks/README.md.
#
#   Benchmarks/table.sh [--runs 3] [--size 10000] [--big-size 100000] [--shapes wide,chain,layered]
#                       [--validate-sizes 10000,100000,1000000] [--parts graphs,large,validate,startup]
#                       [--tools floor,jobgraph,ninja,make,task] [--big-tools floor,jobgraph,ninja,make]
#                       [--jobs 2] [--timeout 900] [--markdown FILE] [--dir DIR] [--keep] [--no-build]
#
# JOBGRAPH=/path/to/jobgraph measures that binary instead of building one. With the defaults it takes
# about half an hour on a 2-core machine. Exits 1 if a tool failed (its cells show –).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/Benchmarks/lib/common.sh"

parse_options bench_table "$@"
ensure_peers "$opt_tools,$opt_big_tools"
[[ ,$opt_parts, == *,validate,* ]] && ensure_peers ninja
[[ -x /usr/bin/time ]] || apt_install time
find_jobgraph "$skip_build"
note_tools
exec python3 "$root/Benchmarks/lib/bench_table.py" --jobgraph "$jobgraph" "${passed[@]}"
