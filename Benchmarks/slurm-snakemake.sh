#!/usr/bin/env bash
# jobgraph beside Snakemake's Slurm executor plugin on one local cluster (issue 34): snakemake.sh's
# variant-calling workflow run by jobgraph in jobs mode, jobgraph in allocation mode and Snakemake with
# `--executor slurm` (its status-check intervals as they come, and set to 1 s), one after the other on a cluster
# of 2 or 3 nodes with accounting (the plugin reads `sacct`), started and stopped by this script. Prints
# one table: each run's wall time, its calls to each Slurm client (counted by wrapper scripts first on
# PATH), status polls per minute and whether every output exists. Exits 1 when a run fails.
#
#   Benchmarks/slurm-snakemake.sh [--samples 24] [--reads 2000] [--jobs 4] [--nodes 2]
#                                 [--status-checks defaults,fast|none] [--timeout 1800] [--dir DIR] [--keep] [--no-build]
#
# Installs bwa, samtools and bcftools from Debian, and Snakemake with snakemake-executor-plugin-slurm from
# PyPI into Benchmarks/.venv. JOBGRAPH=/path/to/jobgraph measures that binary instead of building one.
# Needs root (the cluster).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/Benchmarks/lib/common.sh"

parse_options bench_slurm_snakemake "$@"
for tool in bwa samtools bcftools; do command -v $tool >/dev/null || apt_install bwa samtools bcftools; done
venv=$root/Benchmarks/.venv
if [[ ! -x $venv/bin/snakemake ]]; then
    note "installing Snakemake from PyPI into $venv"
    python3 -m venv "$venv" || { apt_install python3-venv; python3 -m venv "$venv"; }
fi
if ! "$venv/bin/python" -c 'import snakemake, snakemake_executor_plugin_slurm' 2>/dev/null; then
    note "installing Snakemake and its Slurm executor plugin from PyPI into $venv"
    "$venv/bin/pip" install -q snakemake snakemake-executor-plugin-slurm >/dev/null \
        || die "pip install snakemake snakemake-executor-plugin-slurm failed"
fi
find_jobgraph "$skip_build"

# A cluster of the script's own: its folder, ports (slurmctld 6987, slurmd 6988-6990, slurmdbd 6996,
# MariaDB 6997) and node names differ from the tests' clusters and slurm.sh's.
export JOBGRAPH_SLURM_DIR=/tmp/jobgraph-slurm-smk JOBGRAPH_SLURM_PORT=6987 JOBGRAPH_SLURM_NODE=jgsmk
export JOBGRAPH_SLURM_NODES=$opt_nodes JOBGRAPH_SLURM_CPUS=$(((opt_jobs + opt_nodes - 1) / opt_nodes))
export JOBGRAPH_SLURM_ACCOUNTING=1
cleanup() { "$root/scripts/slurm-local.sh" down >/dev/null 2>&1 || true; }
trap cleanup EXIT
note "starting a Slurm cluster of $opt_nodes nodes with $JOBGRAPH_SLURM_CPUS CPUs each, with accounting"
source "$("$root/scripts/slurm-local.sh" up)"

note "jobgraph: $jobgraph; snakemake $("$venv/bin/snakemake" --version); snakemake-executor-plugin-slurm" \
    "$("$venv/bin/pip" show snakemake-executor-plugin-slurm 2>/dev/null | sed -n 's/^Version: //p'); $(sinfo --version)"
note "$(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg) (wall times on a busy machine are noise; call counts are not)"
status=0
python3 "$root/Benchmarks/lib/bench_slurm_snakemake.py" --jobgraph "$jobgraph" --snakemake "$venv/bin/snakemake" \
    "${passed[@]}" || status=$?
note "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
exit $status
