#!/usr/bin/env bash
# Times `jobgraph validate` on a 10,000-task file, a 100,000-task file and a "billion laughs" alias
# bomb, and prints each figure beside its target. See Benchmarks/README.md.
#
#   Benchmarks/validate.sh [--runs 5] [--no-build]
#
# JOBGRAPH=/path/to/jobgraph measures that binary instead of building one. Exits 1 if a target is missed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/Benchmarks/lib/common.sh"

parse_options bench_validate "$@"
[[ -x /usr/bin/time ]] || apt_install time
find_jobgraph "$skip_build"
note "jobgraph: $jobgraph; load average $(cut -d' ' -f1-3 /proc/loadavg) (figures on a busy machine are noise)"
exec python3 "$root/Benchmarks/lib/bench_validate.py" --jobgraph "$jobgraph" "${passed[@]}"
