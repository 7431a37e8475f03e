#!/usr/bin/env bash
# Makespan of jobgraph's critical-path scheduling on random layered DAGs of `sleep` tasks with --jobs 2,
# without and with run history, against the lower bound max(critical path, work / jobs) and a simulated
# plain file-order scheduler. See Benchmarks/README.md.
#
#   Benchmarks/makespan.sh [--dags 5] [--tasks 40] [--jobs 2] [--seed 7] [--keep] [--no-build]
#
# JOBGRAPH=/path/to/jobgraph measures that binary instead of building one. Exits 1 if, once history
# exists, a DAG ends more than 10% over the lower bound although a schedule within it exists.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/Benchmarks/lib/common.sh"

parse_options makespan "$@"
find_jobgraph "$skip_build"
note "jobgraph: $jobgraph"
note "$(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg) (figures on a busy machine are noise)"
exec python3 "$root/Benchmarks/lib/makespan.py" --jobgraph "$jobgraph" "${passed[@]}"
