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

skip_build=no
passed=()
while [[ $# -gt 0 ]]; do
    case $1 in
    -h | --help) sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --no-build) skip_build=yes; shift ;;
    --keep) passed+=("$1"); shift ;;
    --dags | --tasks | --jobs | --seed)
        [[ $# -ge 2 ]] || die "$1 needs a value"
        passed+=("$1" "$2"); shift 2 ;;
    *) die "unknown option '$1' (try --help)" ;;
    esac
done

need_python
find_jobgraph "$skip_build"
note "jobgraph: $jobgraph"
note "$(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg) (figures on a busy machine are noise)"
exec python3 "$root/Benchmarks/lib/makespan.py" --jobgraph "$jobgraph" "${passed[@]}"
