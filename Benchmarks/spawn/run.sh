#!/usr/bin/env bash
# Spawn micro-benchmark: 2,000 `touch` children, 2 at a time, through JobGraphSystem's EventLoop and
# ProcessSpawner, next to a bare posix_spawn + waitpid(-1) loop (make's way). It lives in
# Tests/JobGraphSystemTests/SpawnBenchmarkTests.swift, disabled unless JOBGRAPH_BENCH is set, so that it
# needs no target of its own. Run it alone (the bare loop reaps any child) on a quiet machine.
#
#   Benchmarks/spawn/run.sh [--no-build]
#
# SCRATCH_PATH chooses the build folder (default .build-bench); --no-build runs the last build of it.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$root/Benchmarks/lib/common.sh"

parse_options none "$@"
build=()
[[ $skip_build == yes ]] && build=(--skip-build)
cd "$root"
JOBGRAPH_BENCH=1 exec swift test -c release --scratch-path "${SCRATCH_PATH:-.build-bench}" "${build[@]}" --filter SpawnBenchmarkTests
