#!/usr/bin/env python3
"""jobgraph beside Snakemake on the Snakemake tutorial's variant-calling workflow.

Called by ../snakemake.sh, which installs the tools and builds jobgraph in release; run that instead.

The workflow, the same commands in both files: per sample `bwa mem | samtools view -b`, `samtools sort`
and `samtools index`; then `bcftools mpileup | bcftools call` over every sorted file, and a summary.
jobgraph's file reads the samples from `samples.txt` (a `from:` list no task writes, so read before
the run) and chains each sample's steps with per-item needs (`sort[{{ index }}]`); the call step finds
its needs from the files. Snakemake's file is the tutorial's, with wildcards.

Figures:
  - clean: wall time from an empty output folder, each tool at --jobs/--cores JOBS;
  - first index: seconds from the start until the first `.bai` exists (its modification time), where a
    barrier between the steps would put it after every `bwa`;
  - dry run: `jobgraph run -n` and `snakemake -n`, wall time and peak resident memory, on folders with
    the sample files present (empty: a dry run reads none);
  - no-op: the median of five reruns, everything up to date, at the largest clean size.
"""

import os
import random
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import options  # noqa: E402
from measure import measure, scratch_folder  # noqa: E402

JOBGRAPH_FILE = """version: 1
tasks:
  map:
    foreach: {from: samples.txt}
    run: "mkdir -p mapped && bwa mem -t 1 data/genome.fa data/samples/{{ item }}.fq 2>/dev/null | samtools view -b -o mapped/{{ item }}.bam -"
    inputs: [data/genome.fa, "data/samples/{{ item }}.fq"]
    outputs: ["mapped/{{ item }}.bam"]
  sort:
    foreach: {from: samples.txt}
    needs: ["map[{{ index }}]"]
    run: "mkdir -p sorted && samtools sort -o sorted/{{ item }}.bam mapped/{{ item }}.bam 2>/dev/null"
    inputs: ["mapped/{{ item }}.bam"]
    outputs: ["sorted/{{ item }}.bam"]
  index:
    foreach: {from: samples.txt}
    needs: ["sort[{{ index }}]"]
    run: "samtools index sorted/{{ item }}.bam"
    inputs: ["sorted/{{ item }}.bam"]
    outputs: ["sorted/{{ item }}.bam.bai"]
  call:
    run: "mkdir -p calls && bcftools mpileup -f data/genome.fa sorted/*.bam 2>/dev/null | bcftools call -mv -o calls/all.vcf 2>/dev/null"
    inputs: [data/genome.fa, "sorted/*.bam", "sorted/*.bam.bai"]
    outputs: [calls/all.vcf]
  summary:
    run: "grep -vc '^#' calls/all.vcf > summary.txt || true"
    inputs: [calls/all.vcf]
    outputs: [summary.txt]
"""

SNAKEFILE = """SAMPLES = [line.strip() for line in open("samples.txt") if line.strip()]

rule all:
    input: "summary.txt"

rule map:
    input: fa="data/genome.fa", fq="data/samples/{sample}.fq"
    output: "mapped/{sample}.bam"
    shell: "bwa mem -t 1 {input.fa} {input.fq} 2>/dev/null | samtools view -b -o {output} -"

rule sort:
    input: "mapped/{sample}.bam"
    output: "sorted/{sample}.bam"
    shell: "samtools sort -o {output} {input} 2>/dev/null"

rule index:
    input: "sorted/{sample}.bam"
    output: "sorted/{sample}.bam.bai"
    shell: "samtools index {input}"

rule call:
    input:
        fa="data/genome.fa",
        bam=expand("sorted/{sample}.bam", sample=SAMPLES),
        bai=expand("sorted/{sample}.bam.bai", sample=SAMPLES)
    output: "calls/all.vcf"
    shell: "bcftools mpileup -f {input.fa} {input.bam} 2>/dev/null | bcftools call -mv -o {output} 2>/dev/null"

rule summary:
    input: "calls/all.vcf"
    output: "summary.txt"
    shell: "grep -vc '^#' {input} > {output} || true"
"""


def parser(shell=False, prog=None):
    return options.parser(__doc__, ["jobgraph", "snakemake", "samples", "dry_samples", "reads", "jobs", "timeout", "dir", "keep"],
                          shell, prog)


def make_reference(folder):
    """A random 100 kb genome, indexed for bwa and samtools."""
    data = os.path.join(folder, "data")
    os.makedirs(os.path.join(data, "samples"), exist_ok=True)
    rng = random.Random(32)
    genome = "".join(rng.choice("ACGT") for _ in range(100_000))
    with open(os.path.join(data, "genome.fa"), "w") as fasta:
        fasta.write(">chr1\n")
        for start in range(0, len(genome), 60):
            fasta.write(genome[start:start + 60] + "\n")
    subprocess.run(["bwa", "index", "genome.fa"], cwd=data, check=True, capture_output=True)
    subprocess.run(["samtools", "faidx", "genome.fa"], cwd=data, check=True, capture_output=True)


def make_samples(folder, count, reads, source=None, simulate=True):
    """`count` samples: reads simulated with wgsim (a few distinct sets, copied), or empty files."""
    data = os.path.join(folder, "data")
    names = [f"S{number:05d}" for number in range(1, count + 1)]
    distinct = []
    if simulate:
        for seed in range(4):
            path = os.path.join(data, f"sim{seed}.fq")
            subprocess.run(["wgsim", "-S", str(seed + 1), "-N", str(reads), "-1", "70", "-2", "70", "-r", "0.001",
                            "genome.fa", path, "/dev/null"], cwd=data, check=True, capture_output=True)
            distinct.append(path)
    for position, name in enumerate(names):
        target = os.path.join(data, "samples", name + ".fq")
        if distinct:
            shutil.copyfile(distinct[position % len(distinct)], target)
        else:
            open(target, "w").close()
    with open(os.path.join(folder, "samples.txt"), "w") as listing:
        listing.write("\n".join(names) + "\n")


def workspace(parent, count, reads, simulate):
    folder = os.path.join(parent, f"{'run' if simulate else 'dry'}-{count}")
    os.makedirs(folder)
    make_reference(folder)
    make_samples(folder, count, reads, simulate=simulate)
    with open(os.path.join(folder, "p.yaml"), "w") as pipeline:
        pipeline.write(JOBGRAPH_FILE)
    with open(os.path.join(folder, "Snakefile"), "w") as snakefile:
        snakefile.write(SNAKEFILE)
    return folder


def copy_for(tool, folder):
    """A copy of the prepared folder for one tool, so neither sees the other's outputs."""
    target = folder + "-" + tool
    shutil.copytree(folder, target, symlinks=True)
    return target


def first_index_after(folder, start):
    stamps = [entry.stat().st_mtime for entry in os.scandir(os.path.join(folder, "sorted")) if entry.name.endswith(".bai")] \
        if os.path.isdir(os.path.join(folder, "sorted")) else []
    return min(stamps) - start if stamps else float("nan")


def job_count(count):
    """The workflow's jobs for `count` samples: three per sample, then the call and the summary."""
    return 3 * count + 2


def jobs_done(folder, count):
    """How many of the workflow's `job_count(count)` jobs have their output: the progress of a run that timed out."""
    def present(*parts):
        return os.path.exists(os.path.join(folder, *parts))
    names = [f"S{number:05d}" for number in range(1, count + 1)]
    done = sum(present("mapped", name + ".bam") + present("sorted", name + ".bam") + present("sorted", name + ".bam.bai")
               for name in names)
    return done + present("calls", "all.vcf") + present("summary.txt")


class AtLeast(float):
    """A wall time that a timeout cut short: the run would have taken longer."""

    def __new__(cls, seconds, note):
        value = super().__new__(cls, seconds)
        value.note = note
        return value


def commands(tool, args, dry=False):
    if tool == "jobgraph":
        return [args.jobgraph, "run", "p.yaml", "--jobs", str(args.jobs), "--progress", "plain"] + (["--dry-run"] if dry else [])
    return [args.snakemake, "--cores", str(args.jobs)] + (["-n"] if dry else [])


def timed_run(tool, folder, args, dry=False):
    import time
    start = time.time()
    result = measure(commands(tool, args, dry), folder, timeout=args.timeout, peak_rss=True)
    if result.timed_out:
        status = f"timed out after {args.timeout:g} s"
    elif result.status != 0:
        status = f"exit {result.status}: {result.stderr_tail[-400:]}"
    else:
        status = "ok"
    return result, start, status


# The no-op rerun is the median of this many: one run of a tenth of a second moves by a fifth with the
# machine's other work.
NOOP_RERUNS = 5


def main(argv):
    args = parser().parse_args(argv)
    args.jobgraph = os.path.abspath(args.jobgraph)
    parent = scratch_folder("jobgraph-snakemake-", args.dir)
    rows = []
    failures = []
    try:
        for count in args.samples:
            prepared = workspace(parent, count, args.reads, simulate=True)
            figures = {}
            for tool in ("jobgraph", "snakemake"):
                folder = copy_for(tool, prepared)
                result, start, status = timed_run(tool, folder, args)
                ok = status == "ok"
                clean = result.seconds if ok else None
                if result.timed_out:
                    clean = AtLeast(args.timeout, f"{jobs_done(folder, count):,} of {job_count(count):,} jobs done")
                figures[tool] = dict(clean=clean, first=first_index_after(folder, start) if ok or result.timed_out else None,
                                     status=status)
                if count == max(args.samples) and ok:
                    reruns = [timed_run(tool, folder, args) for _ in range(NOOP_RERUNS)]
                    again_status = next((status for _, _, status in reruns if status != "ok"), "ok")
                    figures[tool]["noop"] = statistics.median(again.seconds for again, _, _ in reruns) if again_status == "ok" else None
                    figures[tool]["noop_status"] = again_status
                failures += [f"{tool}, {count} samples: {text}" for text in (status, figures[tool].get("noop_status", "ok")) if text != "ok"]
                print(f"{count} samples, {tool}: clean {shown(figures[tool]['clean'])} s, first index at {shown(figures[tool]['first'])} s"
                      + (f", no-op {shown(figures[tool]['noop'])} s" if "noop" in figures[tool] else ""), file=sys.stderr)
            rows.append((f"clean, {count} samples (s)", figures["jobgraph"]["clean"], figures["snakemake"]["clean"]))
            rows.append((f"first index, {count} samples (s after start)", figures["jobgraph"]["first"], figures["snakemake"]["first"]))
            if "noop" in figures["jobgraph"]:
                rows.append((f"no-op rerun, {count} samples (s)", figures["jobgraph"]["noop"], figures["snakemake"]["noop"]))
        for count in args.dry_samples:
            prepared = workspace(parent, count, args.reads, simulate=False)
            figures = {}
            for tool in ("jobgraph", "snakemake"):
                result, _, status = timed_run(tool, prepared, args, dry=True)
                figures[tool] = (result.seconds, result.peak_rss_mb) if status == "ok" else (None, None)
                if status != "ok":
                    failures.append(f"{tool} dry run, {count} samples: {status}")
                print(f"{count} samples, {tool} dry run: {shown(figures[tool][0])} s, {shown(figures[tool][1])} MB", file=sys.stderr)
            rows.append((f"dry run, {count} samples (s)", figures["jobgraph"][0], figures["snakemake"][0]))
            rows.append((f"dry run, {count} samples (MB)", figures["jobgraph"][1], figures["snakemake"][1]))
    finally:
        if args.keep:
            print(f"files kept in {parent}", file=sys.stderr)
        else:
            shutil.rmtree(parent, ignore_errors=True)

    width = max(len(row[0]) for row in rows)
    print(f"{'figure':<{width}}  {'jobgraph':>10}  {'snakemake':>10}  {'jobgraph / snakemake':>20}")
    for name, ours, theirs in rows:
        ratio = f"{ours / theirs:.3f}x" if ours is not None and theirs else "-"
        if isinstance(theirs, AtLeast) and ours is not None and not isinstance(ours, AtLeast):
            ratio = "< " + ratio
        print(f"{name:<{width}}  {shown(ours):>10}  {shown(theirs):>10}  {ratio:>20}")
    for failure in failures:
        print("failed: " + failure, file=sys.stderr)
    return 1 if failures else 0


def shown(value):
    """A figure, or `-` for a run that failed."""
    if isinstance(value, AtLeast):
        return f"> {float(value):.3f} ({value.note})"
    return "-" if value is None or value != value else f"{value:.3f}"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
