#!/usr/bin/env bash
# Fuzzes the pipeline check (YAML -> pipeline -> task graph) with libFuzzer for SECONDS seconds.
#
#   Fuzz/run.sh SECONDS [LIBFUZZER_FLAG...]
#
# Builds the JobGraphFuzz target with the fuzzer and address sanitizers into .build-fuzz, seeds the
# corpus .build-fuzz/corpus (kept between runs, never committed) from Tests/Fixtures/**/*.yaml and
# examples/*.yaml, and runs with the YAML and contract dictionary Fuzz/yaml.dict. Inputs that crash,
# leak, time out or break a promise of the check are written to Fuzz/artifacts/ (git-ignored); replay
# one with `swift run JobGraphFuzz Fuzz/artifacts/crash-...` or the fuzzer binary itself.
set -euo pipefail

die() { echo "Fuzz/run.sh: $*" >&2; exit 2; }

[[ $# -ge 1 && $1 =~ ^[0-9]+$ && $1 -gt 0 ]] || die "usage: Fuzz/run.sh SECONDS [LIBFUZZER_FLAG...]  (SECONDS a positive whole number)"
seconds=$1
shift

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
command -v swift >/dev/null || die "swift is not on PATH; install the Swift toolchain (6.x) first"

scratch=.build-fuzz
mkdir -p "$scratch"
echo "== building JobGraphFuzz with -sanitize=fuzzer,address (release, $scratch)"
if ! swift build -c release --product JobGraphFuzz --scratch-path "$scratch" \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING >"$scratch/build.log" 2>&1; then
    tail -n 40 "$scratch/build.log" >&2
    die "building the fuzz target failed (full log: $scratch/build.log)"
fi
fuzzer="$scratch/release/JobGraphFuzz"
[[ -x $fuzzer ]] || die "the build succeeded but $fuzzer is missing"

corpus="$scratch/corpus"
artifacts="Fuzz/artifacts"
mkdir -p "$corpus" "$artifacts"
seeds=0
shopt -s nullglob globstar
for seed in Tests/Fixtures/**/*.yaml examples/*.yaml; do
    # Flattened names keep seeds from different folders apart; libFuzzer's own finds are hashes.
    cp "$seed" "$corpus/seed-${seed//\//_}"
    seeds=$((seeds + 1))
done
echo "== corpus $corpus: $seeds seed files, $(find "$corpus" -type f | wc -l) inputs in all"

log="$scratch/fuzz.log"
echo "== fuzzing for $seconds s (log: $log)"
status=0
"$fuzzer" "$corpus" \
    -dict=Fuzz/yaml.dict \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
    -artifact_prefix="$artifacts/" -print_final_stats=1 "$@" >"$log" 2>&1 || status=$?

runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
elapsed=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)
peak=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -n 1)
coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 || true)
if [[ -n $runs ]]; then
    rate=$(( runs / (elapsed > 0 ? elapsed : seconds) ))
    echo "== executions: $runs in ${elapsed:-$seconds} s ($rate/s), ${coverage:-cov: ?}, peak RSS ${peak:-?} MB"
fi
if [[ $status -ne 0 ]]; then
    echo "== libFuzzer stopped with status $status; the end of its log:" >&2
    grep -E 'ERROR|violation|Test unit written|SUMMARY|==[0-9]+==' "$log" | head -n 40 >&2 || true
    tail -n 20 "$log" >&2
    echo "== artifacts in $artifacts/; replay with: $fuzzer $artifacts/<file>  or  swift run JobGraphFuzz $artifacts/<file>" >&2
    exit 1
fi
echo "== no crash"
