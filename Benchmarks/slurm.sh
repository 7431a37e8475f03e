#!/usr/bin/env bash
# Per-task overhead of running on Slurm, each mode against the local executor on the same graph: 1,000
# no-op tasks, then 200 tasks of 0.5 s, all independent, --jobs 8, on a one-node local cluster
# (scripts/slurm-local.sh, with 8 CPUs declared). Prints each run's wall time and, per mode, the
# overhead per task: (mode's wall time - local wall time) x jobs / tasks, the latency each task adds.
#
#   Benchmarks/slurm.sh [--noop 1000] [--sleepers 200] [--jobs 8] [--modes allocation,jobs] [--no-build]
#
# JOBGRAPH=/path/to/jobgraph measures that binary instead of building one. Needs root (the cluster).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/Benchmarks/lib/common.sh"

parse_options bench_slurm "$@"
noop=$opt_noop
sleepers=$opt_sleepers
jobs=$opt_jobs
modes=${opt_modes//,/ }

find_jobgraph "$skip_build"

# A cluster of the benchmark's own, beside any other the script started.
export JOBGRAPH_SLURM_DIR=/tmp/jobgraph-slurm-bench JOBGRAPH_SLURM_PORT=6937 JOBGRAPH_SLURM_NODE=jobgraph-bench
export JOBGRAPH_SLURM_CPUS=$jobs
work=$(mktemp -d "${TMPDIR:-/tmp}/jobgraph-slurm-bench.XXXXXX")
cleanup() {
    "$root/scripts/slurm-local.sh" down >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
note "starting a one-node Slurm cluster with $jobs CPUs"
source "$("$root/scripts/slurm-local.sh" up)"

# graph NAME COUNT COMMAND: COUNT independent tasks.
graph() {
    local file="$work/$1/p.yaml"
    mkdir -p "$work/$1"
    { echo "version: 1"; echo "tasks:"; for ((i = 0; i < $2; i++)); do echo "  t$i: {run: \"$3\"}"; done; } >"$file"
    echo "$file"
}

# wall FILE ARGS...: seconds of one run (fresh state each time), or dies when the run fails.
wall() {
    local file=$1 start end
    shift
    rm -rf "$(dirname "$file")/.jobgraph"
    start=$(date +%s.%N)
    "$jobgraph" run "$file" --jobs "$jobs" --progress json "$@" >/dev/null 2>"$work/stderr" \
        || die "jobgraph run $* failed: $(tail -3 "$work/stderr")"
    end=$(date +%s.%N)
    echo "$end - $start" | bc -l
}

printf '%-22s %-11s %9s %14s\n' graph executor "wall (s)" "per task (s)"
for spec in "noop:$noop:true" "sleep:$sleepers:sleep 0.5"; do
    IFS=: read -r name count command <<<"$spec"
    [[ $count -gt 0 ]] || continue
    file=$(graph "$name" "$count" "$command")
    label="$count × $command"
    local_wall=$(wall "$file" --executor local)
    printf '%-22s %-11s %9.2f %14s\n' "$label" local "$local_wall" -
    for mode in $modes; do
        mode_wall=$(wall "$file" --executor slurm --slurm-mode "$mode")
        overhead=$(echo "($mode_wall - $local_wall) * $jobs / $count" | bc -l)
        printf '%-22s %-11s %9.2f %14.3f\n' "$label" "$mode" "$mode_wall" "$overhead"
    done
done
