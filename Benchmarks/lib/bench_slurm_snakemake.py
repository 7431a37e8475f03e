#!/usr/bin/env python3
"""jobgraph beside Snakemake's Slurm executor plugin, on one local cluster with accounting.

Called by ../slurm-snakemake.sh, which installs the tools, builds jobgraph in release and starts (and
stops) the cluster; run that instead. SLURM_CONF must name the cluster.

The workflow is snakemake.sh's variant-calling chain (bench_snakemake.py's files: per sample `bwa mem |
samtools view`, `samtools sort`, `samtools index`, then one `bcftools call` and a summary), each run
in a fresh copy of one prepared folder, one after the other:
  - jobgraph in jobs mode (one batch job per task) and in allocation mode (one allocation, worker steps);
  - Snakemake with `--executor slurm`, with its status-check intervals as they come ('defaults': the
    wait before the first check is Snakemake's --seconds-between-status-checks, 10 s; after that the
    plugin waits its --slurm-init-seconds-before-status-checks, 40 s, after a check that saw a job end,
    and 10 s longer than the last time after one that saw none, up to 180 s), and/or with both set to
    1 s ('fast'; the 10 s steps after checks that see no job end stay).

Each run gets wrapper scripts for the Slurm clients first on PATH: each appends its name to the run's
log and execs the real program. Batch jobs inherit PATH, so calls made inside jobs count too (Snakemake's
job step runs `srun` in each job). Figures: wall time, each client's calls, status polls (squeue and
sacct) per minute, and whether every output exists.
"""

import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import options  # noqa: E402
from bench_snakemake import copy_for, job_count, jobs_done, workspace  # noqa: E402
from measure import measure, scratch_folder  # noqa: E402

# The clients whose calls are counted; the last three are not in issue 34's list, but the tools call them.
CLIENTS = ("sbatch", "squeue", "sacct", "srun", "scancel", "salloc", "scontrol", "sinfo", "sacctmgr", "sshare")


def parser(shell=False, prog=None):
    return options.parser(__doc__, ["jobgraph", "snakemake", "samples", "reads", "jobs", "nodes", "status_checks",
                                    "timeout", "dir", "keep"],
                          shell, prog, helps={"samples": "samples of the workflow, each size run by every tool, comma-separated"},
                          samples="24", jobs=4, timeout=1800)


def runs(args):
    """(label, folder suffix, command) of every run, in the order they run."""
    jobgraph = [args.jobgraph, "run", "p.yaml", "--jobs", str(args.jobs), "--progress", "plain", "--executor", "slurm"]
    # mem_mb: Snakemake's own default, passed on as `--mem`. Without it the plugin asks for no memory, a
    # job gets the cluster's DefMemPerCPU (200 MB), and the Snakemake process each job runs with its rule
    # takes most of that: the `call` job ended OUT_OF_MEMORY (2026-11-29). Memory does not limit how many
    # jobs a node runs here (CPUs do), so the figures do not depend on it.
    snakemake = [args.snakemake, "--executor", "slurm", "--jobs", str(args.jobs), "--default-resources", "mem_mb=1000"]
    result = [("jobgraph, jobs mode", "jobgraph-jobs", jobgraph + ["--slurm-mode", "jobs"]),
              ("jobgraph, allocation mode", "jobgraph-allocation", jobgraph + ["--slurm-mode", "allocation"])]
    if "defaults" in args.status_checks:
        result.append(("snakemake, plugin defaults", "snakemake-defaults", snakemake))
    if "fast" in args.status_checks:
        result.append(("snakemake, 1 s intervals", "snakemake-fast",
                       snakemake + ["--slurm-init-seconds-before-status-checks", "1", "--seconds-between-status-checks", "1"]))
    return result


def wrappers(folder):
    """A folder of wrapper scripts, one per client, that log their calls to `folder`/slurm-calls.log;
    returns (the wrappers' folder, the log)."""
    bin_folder = os.path.join(folder, ".slurm-bin")
    log = os.path.join(folder, "slurm-calls.log")
    os.makedirs(bin_folder)
    open(log, "w").close()
    for client in CLIENTS:
        real = shutil.which(client)
        if real is None:
            sys.exit(f"bench_slurm_snakemake: no '{client}' on PATH")
        path = os.path.join(bin_folder, client)
        with open(path, "w") as script:
            # One short line per call with O_APPEND: concurrent calls do not interleave. SLURM_CONF where a
            # caller removed it: Snakemake's job step runs `srun` without the SLURM_* variables, and this
            # cluster's configuration is not at the default path a site's would be.
            script.write(f"#!/bin/sh\necho {client} >> '{log}'\n"
                         f"export SLURM_CONF=\"${{SLURM_CONF:-{os.environ['SLURM_CONF']}}}\"\nexec '{real}' \"$@\"\n")
        os.chmod(path, 0o755)
    return bin_folder, log


def calls(log):
    counts = dict.fromkeys(CLIENTS, 0)
    with open(log) as lines:
        for line in lines:
            counts[line.strip()] += 1
    return counts


def live_jobs():
    """The cluster's jobs not yet gone (any user, the real squeue), or None when squeue fails."""
    result = subprocess.run(["squeue", "--noheader", "--format=%i %T"], capture_output=True, text=True)
    return result.stdout.split("\n")[:-1] if result.returncode == 0 else None


def wait_for_empty_queue(seconds=120):
    """Waits until the cluster runs nothing, so that no run pays for the one before; the jobs left."""
    deadline = time.monotonic() + seconds
    while True:
        jobs = live_jobs()
        if jobs == [] or time.monotonic() > deadline:
            return jobs
        time.sleep(0.5)


def load_average():
    with open("/proc/loadavg") as source:
        return float(source.read().split()[0])


def main(argv):
    args = parser().parse_args(argv)
    args.jobgraph = os.path.abspath(args.jobgraph)
    parent = scratch_folder("jobgraph-slurm-snakemake-", args.dir)
    rows = []
    failures = []
    try:
        for count in args.samples:
            prepared = workspace(parent, count, args.reads, simulate=True)
            expected = job_count(count)
            for label, suffix, command in runs(args):
                left = wait_for_empty_queue()
                if left:
                    failures.append(f"{label}, {count} samples: jobs of the run before are still in Slurm: {left}")
                folder = copy_for(suffix, prepared)
                bin_folder, log = wrappers(folder)
                load_before = load_average()
                result = measure(command, folder, timeout=args.timeout,
                                 environment={"PATH": bin_folder + os.pathsep + os.environ["PATH"]})
                load_after = load_average()
                counted = calls(log)
                done = jobs_done(folder, count)
                status = "ok"
                if result.timed_out:
                    status = f"timed out after {args.timeout:g} s"
                elif result.status != 0:
                    status = f"exit {result.status}: {result.stderr_tail[-600:]}"
                elif done != expected:
                    status = f"exit 0 but only {done} of {expected} outputs exist"
                if status != "ok":
                    failures.append(f"{label}, {count} samples: {status}")
                polls = counted["squeue"] + counted["sacct"]
                rows.append(dict(label=f"{label}, {count} samples", seconds=result.seconds, counted=counted,
                                 polls_per_minute=polls / result.seconds * 60, done=done, expected=expected,
                                 load=f"{load_before:.1f}-{load_after:.1f}", ok=status == "ok"))
                print(f"{label}, {count} samples: {result.seconds:.1f} s, {status}, load average "
                      f"{load_before:.2f} before and {load_after:.2f} after, calls "
                      + ", ".join(f"{name} {number}" for name, number in counted.items()), file=sys.stderr)
        left = wait_for_empty_queue()
        if left:
            failures.append(f"jobs left in Slurm after the last run: {left}")
    finally:
        if args.keep:
            print(f"files kept in {parent}", file=sys.stderr)
        else:
            shutil.rmtree(parent, ignore_errors=True)

    print(table(rows))
    for failure in failures:
        print("failed: " + failure, file=sys.stderr)
    return 1 if failures else 0


def table(rows):
    """The figures as a Markdown table."""
    header = ["run", "wall (s)"] + list(CLIENTS) + ["polls/min", "outputs", "load"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        outputs = f"{row['done']} of {row['expected']}" + (" ok" if row["ok"] else " FAILED")
        cells = [row["label"], f"{row['seconds']:.1f}"] + [str(row["counted"][name]) for name in CLIENTS] \
            + [f"{row['polls_per_minute']:.1f}", outputs, row["load"]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
