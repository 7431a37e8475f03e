#!/usr/bin/env python3
"""Times `jobgraph validate` on large and hostile files and checks them against the targets.

Called by ../validate.sh, which builds jobgraph in release; run that instead. Each case runs
RUNS times; the time is the median, the memory the largest peak resident set of any run.
"""

import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402
import options  # noqa: E402
from measure import measure, median, scratch_folder  # noqa: E402


class Case:
    def __init__(self, name, generate_args, expected_status, max_seconds, max_rss_mb=None, ninja=False):
        self.name = name
        self.generate_args = generate_args
        self.expected_status = expected_status
        self.max_seconds = max_seconds
        self.max_rss_mb = max_rss_mb
        # Also time ninja loading the same graph (`ninja -t targets all`), as a reference.
        self.ninja = ninja

    @property
    def target(self):
        parts = [f"exit {self.expected_status}", f"< {self.max_seconds:g} s"]
        if self.max_rss_mb is not None:
            parts.append(f"< {self.max_rss_mb} MB")
        return ", ".join(parts)


# Targets of issue 11: 10,000 tasks under 0.05 s; 1,000,000 within 3.5 s and 700 MB (1.5 times what
# ninja needs to load the same graph); in between, linear.
CASES = [
    Case("10,000 tasks, 2 needs each", ["--shape", "two-needs", "--size", "10000"], 0, 0.05, ninja=True),
    Case("100,000 tasks, 2 needs each", ["--shape", "two-needs", "--size", "100000"], 0, 0.35, 100, ninja=True),
    Case("1,000,000 tasks, 2 needs each", ["--shape", "two-needs", "--size", "1000000"], 0, 3.5, 700, ninja=True),
    Case("billion laughs (10 levels of 10 aliases)", ["--billion-laughs"], 2, 0.5),
]


def preflight(jobgraph, workdir):
    """Proves `validate` really checks: a file with an unknown need must be refused with exit 2 and a
    located error, a correct one accepted. A validate that does nothing would pass every timing."""
    folder = os.path.join(workdir, "preflight")
    os.makedirs(folder)
    files = {
        "good.yaml": "version: 1\ntasks:\n  a: {run: touch a}\n  b: {run: touch b, needs: [a]}\n",
        "bad.yaml": "version: 1\ntasks:\n  a: {run: touch a}\n  b: {run: touch b, needs: [nope]}\n",
    }
    for name, text in files.items():
        with open(os.path.join(folder, name), "w", encoding="utf-8") as file:
            file.write(text)
    problems = []
    good = measure([jobgraph, "validate", "good.yaml"], folder, timeout=60, keep_stdout=True)
    if good.status != 0:
        problems.append(f"a correct 2-task file was refused (exit {good.status}): {good.stderr_tail.strip()}")
    bad = measure([jobgraph, "validate", "bad.yaml"], folder, timeout=60, keep_stdout=True)
    if bad.status != 2 or "bad.yaml:4:" not in bad.stdout + bad.stderr_tail:
        problems.append(f"a file needing an unknown task gave exit {bad.status} and no 'bad.yaml:4:...' error")
    return problems


def build_yaml_floor(workdir):
    """Compiles ../yaml-floor.c (libyaml's event parser alone over a file) into `workdir`; returns the
    program's path, or None with a note when there is no C compiler or libyaml header."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    source = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "yaml-floor.c")
    program = os.path.join(workdir, "yaml-floor")
    if compiler is not None:
        built = subprocess.run([compiler, "-O2", source, "-lyaml", "-o", program], capture_output=True, text=True)
        if built.returncode == 0:
            return program
        print(f"validate.sh: no libyaml-only figure ({built.stderr.strip().splitlines()[-1:]})", file=sys.stderr)
    else:
        print("validate.sh: no libyaml-only figure (no C compiler)", file=sys.stderr)
    return None


def measure_file(command, cwd, runs, timeout=120):
    """Runs `command` (a validate, or a peer loading the same graph) `runs` times in `cwd` under GNU time.
    Returns (median seconds, largest peak RSS MiB, sorted exit statuses, the measurements)."""
    results = [measure(command, cwd, timeout=timeout, peak_rss=True) for _ in range(runs)]
    return (median([result.seconds for result in results]), max(result.peak_rss_mb for result in results),
            sorted({result.status for result in results}), results)


def parser(shell=False, prog=None):
    return options.parser(__doc__, ["jobgraph", "runs", "dir", "max_tasks"], shell, prog, runs=5)


def main(argv):
    args = parser().parse_args(argv)
    jobgraph = os.path.abspath(args.jobgraph)

    workdir = scratch_folder("jobgraph-validate-", args.dir)
    ninja = shutil.which("ninja")
    rows, missed = [], []
    try:
        try:
            problems = preflight(jobgraph, workdir)
        except FileNotFoundError as missing:
            print(f"validate.sh: cannot start '{missing.filename}'", file=sys.stderr)
            return 2
        if problems:
            print("validate.sh: `jobgraph validate` does not check files yet, so no figures would mean anything:",
                  file=sys.stderr)
            for problem in problems:
                print("  " + problem, file=sys.stderr)
            return 1
        floor = build_yaml_floor(workdir)
        for number, case in enumerate(CASES):
            if "--size" in case.generate_args and int(case.generate_args[case.generate_args.index("--size") + 1]) > args.max_tasks:
                continue
            folder = os.path.join(workdir, str(number))
            with_ninja = case.ninja and ninja is not None
            generate.main(case.generate_args + ["--out", folder, "--forms", "jobgraph,ninja" if with_ninja else "jobgraph"])
            cwd = os.path.join(folder, "jobgraph")
            size_mb = os.path.getsize(os.path.join(cwd, "pipeline.yaml")) / 1e6
            try:
                seconds, rss, statuses, results = measure_file([jobgraph, "validate", "pipeline.yaml"], cwd, args.runs)
            except FileNotFoundError as missing:
                print(f"validate.sh: cannot start '{missing.filename}'", file=sys.stderr)
                return 2
            problems = []
            if any(result.timed_out for result in results):
                problems.append("timed out")
            if statuses != [case.expected_status]:
                problems.append(f"exit {statuses}, expected {case.expected_status}")
            if seconds >= case.max_seconds:
                problems.append(f"{seconds:.3f} s")
            if case.max_rss_mb is not None and rss >= case.max_rss_mb:
                problems.append(f"{rss:.0f} MB")
            verdict = "ok" if not problems else "MISSED: " + ", ".join(problems)
            if problems:
                first_line = results[-1].stderr_tail.strip().splitlines()[:1]
                missed.append(f"{case.name}: {', '.join(problems)}" + (f" (stderr: {first_line[0]})" if first_line else ""))
            reference = "–"
            if with_ninja:
                loads = [measure([ninja, "-t", "targets", "all"], os.path.join(folder, "ninja"), timeout=300, peak_rss=True)
                         for _ in range(args.runs)]
                ninja_seconds = median([load.seconds for load in loads])
                ninja_rss = max(load.peak_rss_mb for load in loads)
                reference = f"{ninja_seconds:.3f} s, {ninja_rss:.0f} MB (× {seconds / ninja_seconds:.2f}, × {rss / ninja_rss:.2f})"
            # libyaml's parser alone over the same file: the part of the time no change to jobgraph's
            # own code can remove.
            parser_only = "–"
            if case.ninja and floor is not None:
                parses = [measure([floor, "pipeline.yaml"], cwd, timeout=300) for _ in range(args.runs)]
                if all(parse.status == 0 for parse in parses):
                    parser_seconds = median([parse.seconds for parse in parses])
                    parser_only = f"{parser_seconds:.3f} s ({parser_seconds / seconds:.0%})"
            rows.append([case.name, f"{size_mb:.1f}", f"{seconds:.3f}", f"{rss:.0f}",
                         ",".join(map(str, statuses)), case.target, verdict, reference, parser_only])
            print(f"  {case.name}: {seconds:.3f} s, {rss:.0f} MB, exit {statuses}; ninja: {reference}; libyaml alone: {parser_only}",
                  file=sys.stderr, flush=True)
            shutil.rmtree(folder, ignore_errors=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    header = ["file", "MB", "median s", "peak RSS MB", "exit", "target", "verdict",
              "ninja -t targets all (jobgraph ×)", "libyaml's parser alone (share of jobgraph's time)"]
    print()
    print(f"`jobgraph validate FILE`: median wall time of {args.runs} runs, largest peak RSS of any run.")
    print()
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    if missed:
        print("\nMissed targets:", file=sys.stderr)
        for line in missed:
            print("  " + line, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
