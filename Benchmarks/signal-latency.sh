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

parse_options signal_latency "$@"
find_jobgraph "$skip_build"
note "jobgraph: $jobgraph; $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
exec python3 "$root/Benchmarks/lib/signal_latency.py" --jobgraph "$(realpath "$jobgraph")" "${passed[@]}"
