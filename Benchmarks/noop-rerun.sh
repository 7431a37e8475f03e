#!/usr/bin/env bash
# No-op rerun of the 10,000-task layered graph: jobgraph (tasks declare inputs and outputs) next to
# ninja and GNU make on the same graph, median of 3 reruns each. See Benchmarks/README.md.
#
#   Benchmarks/noop-rerun.sh [--size 10000] [--runs 3] [--jobs 2] [--dir DIR] [--keep] [--no-build]
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
    --keep) passed+=("$1"); shift ;;
    --size | --runs | --jobs | --dir)
        [[ $# -ge 2 ]] || die "$1 needs a value"
        passed+=("$1" "$2"); shift 2 ;;
    *) die "unknown option '$1' (try --help)" ;;
    esac
done

need_python
ensure_peers ninja make
find_jobgraph "$skip_build"
note "jobgraph: $jobgraph; ninja $(ninja --version); $(make --version | head -n 1)"
note "$(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg) (figures on a busy machine are noise)"
exec python3 "$root/Benchmarks/lib/noop_rerun.py" --jobgraph "$jobgraph" "${passed[@]}"
