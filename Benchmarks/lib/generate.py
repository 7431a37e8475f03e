#!/usr/bin/env python3
"""Writes one task graph in the forms of jobgraph, ninja, GNU make and go-task, plus a plain JSON form.

Every task's command is `touch out/tNNNNN`: no shell syntax, so what is measured is each tool's own
cost of scheduling and starting a process, not the work. The tools run from a folder holding an
empty `out/`, which the caller makes.

    generate.py --shape layered --size 1000 --out DIR [--seed 42] [--forms jobgraph,ninja,make,task,graph]
                [--declare-files]
    generate.py --billion-laughs --out DIR          # DIR/jobgraph/pipeline.yaml: 10 levels of 10 aliases

Shapes (the same seed always gives the same graph):
  wide       N independent tasks
  chain      each task needs the one before it
  layered    about sqrt(N) layers; each task needs 2 random tasks of the layer before
  two-needs  every task from the third on needs 2 random earlier tasks (for validation timing)

Writes DIR/jobgraph/pipeline.yaml, DIR/ninja/build.ninja, DIR/make/Makefile, DIR/task/Taskfile.yml and
DIR/floor/graph.json (for spawn_floor.py), each tool in a folder of its own so no tool sees
another's state files.
"""

import argparse
import json
import math
import os
import random
import sys

FORMS = ("jobgraph", "ninja", "make", "task", "graph")
SHAPES = ("wide", "chain", "layered", "two-needs")


def task_ids(size):
    width = max(5, len(str(size - 1)))
    return [f"t{i:0{width}d}" for i in range(size)]


def needs_for(shape, size, seed):
    """The needs of each task, as lists of earlier task indices."""
    rng = random.Random(seed)
    if shape == "wide":
        return [[] for _ in range(size)]
    if shape == "chain":
        return [[] if i == 0 else [i - 1] for i in range(size)]
    if shape == "layered":
        layer_count = max(1, round(math.sqrt(size)))
        # Spread the remainder over the first layers so sizes differ by at most one.
        base, extra = divmod(size, layer_count)
        needs, previous, start = [], [], 0
        for layer in range(layer_count):
            count = base + (1 if layer < extra else 0)
            current = list(range(start, start + count))
            for _ in current:
                needs.append(sorted(rng.sample(previous, min(2, len(previous)))))
            previous, start = current, start + count
        return needs
    if shape == "two-needs":
        return [sorted(rng.sample(range(i), min(2, i))) for i in range(size)]
    raise ValueError(f"unknown shape '{shape}'")


def sinks(needs):
    """Tasks nothing needs: what the aggregate target of make and go-task must ask for."""
    needed = set()
    for task_needs in needs:
        needed.update(task_needs)
    return [i for i in range(len(needs)) if i not in needed]


def write(path, lines):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as file:
        file.write("\n".join(lines))
        file.write("\n")


def jobgraph_lines(ids, needs, title, declare_files=False):
    """With `declare_files`, each task declares `outputs: [out/ID]` and its needs' outputs as `inputs`,
    as ninja's and make's forms do, so a second run finds everything up to date."""
    lines = ["version: 1", f"name: {title}", "tasks:"]
    for task_id, task_needs in zip(ids, needs):
        keys = [f"run: touch out/{task_id}"]
        if task_needs:
            keys.append("needs: [" + ", ".join(ids[n] for n in task_needs) + "]")
        if declare_files:
            if task_needs:
                keys.append("inputs: [" + ", ".join(f"out/{ids[n]}" for n in task_needs) + "]")
            keys.append(f"outputs: [out/{task_id}]")
        lines.append(f"  {task_id}: {{{', '.join(keys)}}}")
    return lines


def ninja_lines(ids, needs):
    lines = ["rule touch", "  command = touch $out", ""]
    for task_id, task_needs in zip(ids, needs):
        implicit = " | " + " ".join(f"out/{ids[n]}" for n in task_needs) if task_needs else ""
        lines.append(f"build out/{task_id}: touch{implicit}")
    return lines


def make_lines(ids, needs):
    # No built-in rules and no suffixes, as a make user who cares about speed writes it.
    lines = ["MAKEFLAGS += --no-builtin-rules", ".SUFFIXES:", ""]
    lines.append("all: " + " ".join(f"out/{ids[i]}" for i in sinks(needs)))
    lines.append("")
    for task_id, task_needs in zip(ids, needs):
        lines.append(f"out/{task_id}:" + "".join(f" out/{ids[n]}" for n in task_needs))
        lines.append("\ttouch $@")
    return lines


def task_lines(ids, needs, declare_files=False):
    """With `declare_files`, each task declares its needs' outputs as `sources` and its own as `generates`,
    compared by modification time (`method: timestamp`, as make and ninja do); a task with no needs has no
    sources, so `status: [test -f out/ID]` (run by go-task's built-in shell, no process) says when it is done."""
    # `run: once`: a task several others depend on runs once per invocation, as in every other tool.
    lines = ["version: '3'", "run: once"] + (["method: timestamp"] if declare_files else []) + ["tasks:"]
    lines.append("  default:")
    lines.append("    deps: [" + ", ".join(ids[i] for i in sinks(needs)) + "]")
    for task_id, task_needs in zip(ids, needs):
        lines.append(f"  {task_id}:")
        if task_needs:
            lines.append("    deps: [" + ", ".join(ids[n] for n in task_needs) + "]")
        lines.append(f"    cmds: [touch out/{task_id}]")
        if declare_files:
            if task_needs:
                lines.append("    sources: [" + ", ".join(f"out/{ids[n]}" for n in task_needs) + "]")
            else:
                lines.append(f"    status: [test -f out/{task_id}]")
            lines.append(f"    generates: [out/{task_id}]")
    return lines


def billion_laughs_lines(levels=10, fan=10):
    """A pipeline whose one variable expands to fan**levels strings through aliases."""
    lines = ["version: 1", "name: billion-laughs", "laughs:", '  - &l0 "lol"']
    for level in range(1, levels):
        lines.append(f"  - &l{level} [" + ", ".join([f"*l{level - 1}"] * fan) + "]")
    lines += ["vars:", f"  lol: *l{levels - 1}", "tasks:", "  laugh: {run: echo lol}"]
    return lines


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", choices=SHAPES)
    parser.add_argument("--size", type=int)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", required=True)
    parser.add_argument("--forms", default=",".join(FORMS), help="comma-separated subset of " + ",".join(FORMS))
    parser.add_argument("--billion-laughs", action="store_true")
    parser.add_argument("--declare-files", action="store_true",
                        help="jobgraph and go-task tasks declare inputs and outputs, so a second run is a no-op")
    args = parser.parse_args(argv)

    if args.billion_laughs:
        write(os.path.join(args.out, "jobgraph", "pipeline.yaml"), billion_laughs_lines())
        return 0
    if args.shape is None or args.size is None or args.size < 1:
        parser.error("--shape and a positive --size are required")
    forms = [form for form in args.forms.split(",") if form]
    unknown = [form for form in forms if form not in FORMS]
    if unknown:
        parser.error(f"unknown form(s) {unknown}; choose from {','.join(FORMS)}")

    ids = task_ids(args.size)
    needs = needs_for(args.shape, args.size, args.seed)
    title = f"bench-{args.shape}-{args.size}"
    if "jobgraph" in forms:
        write(os.path.join(args.out, "jobgraph", "pipeline.yaml"), jobgraph_lines(ids, needs, title, args.declare_files))
    if "ninja" in forms:
        write(os.path.join(args.out, "ninja", "build.ninja"), ninja_lines(ids, needs))
    if "make" in forms:
        write(os.path.join(args.out, "make", "Makefile"), make_lines(ids, needs))
    if "task" in forms:
        write(os.path.join(args.out, "task", "Taskfile.yml"), task_lines(ids, needs, args.declare_files))
    if "graph" in forms:
        os.makedirs(os.path.join(args.out, "floor"), exist_ok=True)
        with open(os.path.join(args.out, "floor", "graph.json"), "w", encoding="utf-8") as file:
            json.dump({"ids": ids, "needs": needs}, file)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
