#!/bin/sh
# Spawn micro-benchmark: 2,000 `touch` children, 2 at a time, through JobGraphSystem's EventLoop and
# ProcessSpawner, next to a bare posix_spawn + waitpid(-1) loop (make's way). It lives in
# Tests/JobGraphSystemTests/SpawnBenchmarkTests.swift, disabled unless JOBGRAPH_BENCH is set, so that it
# needs no target of its own. Run it alone (the bare loop reaps any child) on a quiet machine.
set -eu
cd "$(dirname "$0")/../.."
JOBGRAPH_BENCH=1 exec swift test -c release --scratch-path "${SCRATCH_PATH:-.build-bench}" --filter SpawnBenchmarkTests
