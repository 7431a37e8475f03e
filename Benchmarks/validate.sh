#!/usr/bin/env bash
# Times `jobgraph validate` on 10,000-, 100,000- and 1,000,000-task files (next to ninja loading the
# same graph, and to libyaml's parser alone: yaml-floor.c) and a "billion laughs" alias bomb, and
# prints each figure beside its target.
#
#   Benchmarks/validate.sh [--runs 5] [--dir DIR] [--max-tasks N] [--no-build]
#
# JOBGRAPH=/path/to/jobgraph measures that binary instead of building one. Exits 1 if a target is missed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/Benchmarks/lib/common.sh"

parse_options bench_validate "$@"
[[ -x /usr/bin/time ]] || apt_install time
ensure_peers ninja
find_jobgraph "$skip_build"
note "jobgraph: $jobgraph; load average $(cut -d' ' -f1-3 /proc/loadavg) (figures on a busy machine are noise)"
exec python3 "$root/Benchmarks/lib/bench_validate.py" --jobgraph "$jobgraph" "${passed[@]}"
