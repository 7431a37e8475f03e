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

skip_build=no
tools="floor,jobgraph,ninja,make,task"
passed=()
while [[ $# -gt 0 ]]; do
    case $1 in
    -h | --help) sed -n '2,8p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --no-build) skip_build=yes; shift ;;
    --keep) passed+=("$1"); shift ;;
    --tools) [[ $# -ge 2 ]] || die "--tools needs a value"; tools=$2; shift 2 ;;
    --sizes | --shapes | --runs | --jobs | --timeout | --dir)
        [[ $# -ge 2 ]] || die "$1 needs a value"
        passed+=("$1" "$2"); shift 2 ;;
    *) die "unknown option '$1' (try --help)" ;;
    esac
done

need_python
peers=()
for tool in ${tools//,/ }; do
    case $tool in ninja | make | task) peers+=("$tool") ;; esac
done
ensure_peers "${peers[@]}"
jobgraph=/nonexistent
if [[ ,$tools, == *,jobgraph,* ]]; then find_jobgraph "$skip_build"; fi

note "jobgraph: $jobgraph; ninja $(ninja --version 2>/dev/null || echo -); $(make --version 2>/dev/null | head -n 1 || echo make -); go-task $(task --version 2>/dev/null || echo -)"
note "$(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg) (figures on a busy machine are noise)"
exec python3 "$root/Benchmarks/lib/bench_graphs.py" --jobgraph "$jobgraph" --tools "$tools" "${passed[@]}"
