#!/usr/bin/env bash
# No-op rerun of the 10,000-task layered graph: jobgraph (tasks declare inputs and outputs) next to
# ninja and GNU make (and go-task with --tools) on the same graph, median of 3 reruns each. See
# Benchmarks/README.md.
#
#   Benchmarks/noop-rerun.sh [--size 10000] [--runs 3] [--jobs 2] [--tools jobgraph,ninja,make,task]
#                            [--dir DIR] [--keep] [--no-build]
#
# JOBGRAPH=/path/to/jobgraph measures that binary instead of building one.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/Benchmarks/lib/common.sh"

parse_options noop_rerun "$@"
ensure_peers "$opt_tools"
find_jobgraph "$skip_build"
note_tools
exec python3 "$root/Benchmarks/lib/noop_rerun.py" --jobgraph "$jobgraph" "${passed[@]}"
