#!/usr/bin/env python3
"""The one option parser of the benchmark scripts.

Every option any script takes is defined once, in OPTIONS: its value type, default and help. A
measuring module (bench_graphs.py, noop_rerun.py, ...) builds its parser with `parser(doc, names)`;
its shell entry point (run-graphs.sh, ...) parses its command line through the same parser, before
it installs or builds anything, with `parse_options MODULE "$@"` from common.sh, which runs

    options.py shell MODULE ARGS...

and evaluates what it prints: `skip_build=yes|no`, `passed=(...)` (the arguments to hand on to the
module, without the shell-only options such as `--no-build`) and `opt_NAME=VALUE` for each option (lists joined with
commas, flags yes/no). A wrong option is refused there, with the usage and exit 2, and --help prints
the script's header comment and the options with their defaults.
"""

import argparse
import importlib
import os
import shlex
import sys


def at_least(minimum, name):
    """A type for whole numbers no smaller than `minimum`, called `name` in messages."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a whole number")
        if value < minimum:
            raise argparse.ArgumentTypeError(f"'{text}' is not a {name}")
        return value
    parse.__name__ = name
    return parse


positive_int = at_least(1, "positive number")
whole_number = at_least(0, "whole number")


def positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive number")
    return value


def comma_list(choices=None, item=str):
    """A type for `a,b,c`: a list of items, each one of `choices` when given."""
    def parse(text):
        values = [part for part in text.split(",") if part]
        if not values:
            raise argparse.ArgumentTypeError("needs at least one value")
        parsed = [item(value) for value in values]
        if choices is not None:
            for value in parsed:
                if value not in choices:
                    raise argparse.ArgumentTypeError(f"unknown value '{value}'; choose from {','.join(choices)}")
        return parsed
    parse.__name__ = "list"  # argparse names the type in its messages
    return parse


SHAPES = ("wide", "chain", "layered")
GRAPH_TOOLS = ("floor", "jobgraph", "ninja", "make", "task")
DIR_HELP = "where the work folder goes (default: /dev/shm when writable, else the temporary folder)"

# name: (add_argument keywords). Option `--some-name` has the name `some_name`.
OPTIONS = {
    # set by the shell scripts, not by their users
    "jobgraph": dict(required=True, help="the jobgraph binary"),
    "convert": dict(default="/usr/bin/convert", help="ImageMagick's convert"),
    # shared
    "runs": dict(type=positive_int, default=3, help="runs of each measurement (the figure is their median)"),
    "jobs": dict(type=positive_int, default=2, help="how many tasks each tool runs at once"),
    "dir": dict(help=DIR_HELP),
    "keep": dict(action="store_true", help="keep the generated files (their folder is printed)"),
    "timeout": dict(type=positive_float, default=900, help="seconds one run may take"),
    # graphs
    "size": dict(type=positive_int, default=10_000, help="tasks in the graph"),
    "sizes": dict(type=comma_list(item=positive_int), default="1000,10000", help="graph sizes, comma-separated"),
    "shapes": dict(type=comma_list(SHAPES), default=",".join(SHAPES), help="graph shapes, comma-separated"),
    "tools": dict(type=comma_list(GRAPH_TOOLS), default=",".join(GRAPH_TOOLS),
                  help="tools to measure, comma-separated"),
    # table.sh
    "big_size": dict(type=positive_int, default=100_000, help="tasks in the large layered graph"),
    "big_tools": dict(type=comma_list(GRAPH_TOOLS), default="floor,jobgraph,ninja,make",
                      help="tools on the large graph, comma-separated (go-task needs about 1.4 GB at 10,000 tasks)"),
    "max_tasks": dict(type=positive_int, default=1_000_000,
                      help="skip the validate cases larger than this (the 1,000,000-task file is 63 MB)"),
    "validate_sizes": dict(type=comma_list(item=positive_int), default="10000,100000,1000000",
                           help="sizes of the files `jobgraph validate` and `ninja -t targets all` load"),
    "parts": dict(type=comma_list(("graphs", "large", "validate", "startup")), default="graphs,large,validate,startup",
                  help="which parts of the table to measure"),
    "markdown": dict(help="also write the table as Markdown to this file"),
    # makespan.sh
    "dags": dict(type=positive_int, default=5, help="how many random DAGs"),
    "tasks": dict(type=positive_int, default=40, help="tasks per DAG"),
    "seed": dict(type=int, default=7, help="seed of the first DAG; the others follow"),
    # filters.sh
    "cases": dict(type=comma_list(), default="sepia,blur,resize,copy", help="filter cases, comma-separated"),
    "formats": dict(type=comma_list(("jpeg", "png")), default="jpeg", help="image formats, comma-separated"),
    # slurm.sh (also --jobs)
    "noop": dict(type=whole_number, default=1000, help="independent no-op tasks in the first graph (0 skips it)"),
    "sleepers": dict(type=whole_number, default=200, help="independent `sleep 0.5` tasks in the second graph (0 skips it)"),
    "modes": dict(type=comma_list(("allocation", "jobs")), default="allocation,jobs",
                  help="Slurm modes to measure, comma-separated"),
    # soak.sh (also --tasks, --jobs, --seed)
    "kills": dict(type=positive_int, default=200, help="how many times jobgraph is killed"),
    "task_sleep": dict(type=positive_float, default=0.02, help="seconds each task sleeps between reading and writing"),
    "changes": dict(type=int, default=10, help="sources rewritten before each run but the first"),
    "sabotage": dict(action="store_true", help="damage an output once, to prove a violation is caught"),
    "edit_pipeline": dict(action="store_true",
                          help="put a new anchor on the pipeline's version before each run but the first (other YAML, the same tasks)"),
    "binary": dict(help="the jobgraph binary to soak (as JOBGRAPH=PATH; default: a fresh release build)"),
    # snakemake.sh (also --jobs, --timeout)
    "samples": dict(type=comma_list(item=positive_int), default="24,2000",
                    help="samples of the clean runs (the no-op rerun uses the largest), comma-separated"),
    "dry_samples": dict(type=comma_list(item=positive_int), default="2000,20000",
                        help="samples of the dry runs, comma-separated"),
    "reads": dict(type=positive_int, default=2000, help="simulated reads per sample"),
    "snakemake": dict(default="snakemake", help="the snakemake command"),
    # slurm-snakemake.sh (also --samples, --reads, --jobs, --timeout, --dir, --keep)
    "nodes": dict(type=int, choices=(2, 3), default=2,
                  help="nodes of the local cluster (2 or 3), each with --jobs / nodes CPUs, rounded up"),
    "status_checks": dict(type=comma_list(("defaults", "fast", "none")), default="defaults,fast",
                          help="Snakemake's runs: 'defaults' keeps its and the Slurm plugin's status-check intervals, "
                               "'fast' sets both to 1 s (comma-separated); 'none' runs jobgraph only"),
    # download.sh
    "size_mb": dict(type=positive_int, default=200, help="size of the one large file, MB"),
    "files": dict(type=positive_int, default=200, help="how many small files"),
}

# Options a shell entry point passes itself: its users do not give them.
SUPPLIED_BY_SCRIPT = ("jobgraph", "convert", "snakemake")
# Options only a shell entry point takes: they are not handed on to its module. `binary` takes a value.
SHELL_ONLY = {"--no-build": False, "--binary": True}


def parser(description, names, shell=False, prog=None, helps=None, **defaults):
    """An ArgumentParser with the options `names` from OPTIONS, `defaults` overriding their defaults and
    `helps` their help texts (a name a script uses in its own sense, such as soak.sh's --tasks).

    `shell`: the parser of the shell entry point: without the options the script supplies itself, with
    the shell's `--no-build`.
    """
    result = argparse.ArgumentParser(prog=prog, description=description,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    for name in names:
        if shell and name in SUPPLIED_BY_SCRIPT:
            continue
        keywords = dict(OPTIONS[name])
        if name in defaults:
            keywords["default"] = defaults[name]
        if helps and name in helps:
            keywords["help"] = helps[name]
        if "default" in keywords and keywords.get("action") != "store_true" and "%(default)" not in keywords["help"]:
            keywords["help"] += " (default: %(default)s)"
        result.add_argument("--" + name.replace("_", "-"), **keywords)
    if shell:
        result.add_argument("--no-build", action="store_true",
                            help="reuse the last release build instead of building")
    unknown = (set(defaults) | set(helps or {})) - set(names)
    if unknown:
        raise ValueError(f"defaults for options not asked for: {sorted(unknown)}")
    return result


def shell_value(value):
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ",".join(str(item) for item in value)
    return "" if value is None else str(value)


def without_shell_only(argv):
    """`argv` without the shell-only options (SHELL_ONLY) and their values."""
    passed = []
    arguments = iter(argv)
    for arg in arguments:
        name = arg.split("=", 1)[0]
        if name not in SHELL_ONLY:
            passed.append(arg)
        elif SHELL_ONLY[name] and "=" not in arg:
            next(arguments, None)
    return passed


def shell(module_name, argv):
    """Parses a shell script's arguments with `module_name`'s parser and prints bash assignments."""
    prog = os.environ.get("BENCH_SCRIPT", module_name)
    usage = os.environ.get("BENCH_USAGE") or None
    if module_name == "none":
        command = parser(None, [], shell=True, prog=prog)
    else:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        command = importlib.import_module(module_name).parser(shell=True, prog=prog)
    # argparse prints its usage errors itself (stderr, exit 2); help must reach the shell as code.
    if usage:
        command.description = usage
    if "-h" in argv or "--help" in argv:
        print(f"printf '%s' {shlex.quote(command.format_help())}; exit 0")
        return 0
    args = command.parse_args(argv)
    passed = without_shell_only(argv)
    print("skip_build=" + ("yes" if args.no_build else "no"))
    print("passed=(" + " ".join(shlex.quote(arg) for arg in passed) + ")")
    for name, value in vars(args).items():
        if name != "no_build":
            print(f"opt_{name}={shlex.quote(shell_value(value))}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "shell":
        sys.exit("usage: options.py shell MODULE [ARGS...]")
    sys.exit(shell(sys.argv[2], sys.argv[3:]))
