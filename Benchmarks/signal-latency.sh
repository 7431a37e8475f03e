#!/usr/bin/env bash
# A second Ctrl-C: seconds from the second SIGINT to jobgraph's exit, with a task that ignores SIGTERM.
# See Benchmarks/README.md and lib/signal_latency.py.
#
#   Benchmarks/signal-latency.sh [--runs 5] [--no-build]
#
# JOBGRAPH=/path/to/jobgraph measures that binary instead of building one.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/Benchmarks/lib/common.sh"

skip_build=no
passed=()
while [[ $# -gt 0 ]]; do
    case $1 in
    -h | --help) sed -n '2,7p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --no-build) skip_build=yes; shift ;;
    --runs)
        [[ $# -ge 2 ]] || die "$1 needs a value"
        passed+=("$1" "$2"); shift 2 ;;
    *) die "unknown option '$1' (try --help)" ;;
    esac
done

need_python
find_jobgraph "$skip_build"
note "jobgraph: $jobgraph; $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
exec python3 "$root/Benchmarks/lib/signal_latency.py" --jobgraph "$(realpath "$jobgraph")" "${passed[@]}"
