#!/usr/bin/env bash
# kill -9 soak: SIGKILLs `jobgraph run` at random moments, reruns after each kill, and checks that the
# state database stays intact, the history calls each killed run interrupted, and no task with a missing,
# partial or stale output is ever reported up to date. See Benchmarks/README.md and lib/soak.py.
#
#   Benchmarks/soak.sh [--kills 200] [--tasks 2000] [--jobs 8] [--task-sleep 0.02] [--changes 10]
#                      [--seed 1] [--dir DIR] [--keep] [--sabotage] [--edit-pipeline] [--binary PATH] [--no-build]
#
# The binary: --binary PATH (or JOBGRAPH=PATH), else a fresh release build. Exits 1 on any violation.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/Benchmarks/lib/common.sh"

parse_options soak "$@"
# --binary is the script's own (the module takes --jobgraph); options.py does not hand it on.
if [[ -n $opt_binary ]]; then JOBGRAPH=$opt_binary; fi
find_jobgraph "$skip_build"
note "jobgraph: $jobgraph; $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
exec python3 "$root/Benchmarks/lib/soak.py" --jobgraph "$(realpath "$jobgraph")" "${passed[@]}"
