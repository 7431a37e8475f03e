#!/usr/bin/env bash
# Side by side with Snakemake on a real bioinformatics workflow (issue 32): per sample, `bwa mem |
# samtools view`, `samtools sort` and `samtools index`, then one `bcftools mpileup | call` and a summary,
# on reads simulated with wgsim from a small random reference. The same commands in both tools' files,
# both at 2 jobs. Prints the clean wall time, the time until the first sample's index exists, the dry
# run's time and peak memory, and the no-op rerun, each with jobgraph's ratio to Snakemake.
#
#   Benchmarks/snakemake.sh [--samples 24,2000] [--dry-samples 2000,20000] [--reads 2000] [--jobs 2]
#                           [--timeout 900] [--dir DIR] [--keep] [--no-build]
#
# Installs bwa, samtools (with wgsim) and bcftools from Debian, and Snakemake from PyPI into
# Benchmarks/.venv. JOBGRAPH=/path/to/jobgraph measures that binary instead of building one.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/Benchmarks/lib/common.sh"

parse_options bench_snakemake "$@"
for tool in bwa samtools bcftools; do command -v $tool >/dev/null || apt_install bwa samtools bcftools; done
[[ -x /usr/bin/time ]] || apt_install time
venv=$root/Benchmarks/.venv
if [[ ! -x $venv/bin/snakemake ]]; then
    note "installing Snakemake from PyPI into $venv"
    python3 -m venv "$venv" || { apt_install python3-venv; python3 -m venv "$venv"; }
    "$venv/bin/pip" install -q snakemake >/dev/null || die "pip install snakemake failed"
fi
find_jobgraph "$skip_build"
note "jobgraph: $jobgraph; snakemake $("$venv/bin/snakemake" --version); bwa $(bwa 2>&1 | sed -n 's/^Version: //p'); $(samtools --version | head -1)"
note "$(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg) (figures on a busy machine are noise)"
exec python3 "$root/Benchmarks/lib/bench_snakemake.py" --jobgraph "$jobgraph" --snakemake "$venv/bin/snakemake" "${passed[@]}"
