#!/usr/bin/env python3
"""Makespan of critical-path scheduling: random layered DAGs of `sleep` tasks run with `--jobs 2`.

For each DAG (fixed seeds, so the same graphs every time):
  1. jobgraph with an empty `.jobgraph/`: no history, every task expected to take one unit
     (docs/pipeline.md, "Order of ready tasks": the remaining critical path when it is urgent, else the
     deepest ready task);
  2. jobgraph again with `--force` after run 1 recorded every task's duration: the same order with the
     measured seconds;
  3. plain file-order list scheduling, simulated (jobgraph cannot be made to schedule in file order):
     whenever a slot is free, the first ready task in file order starts.
Runs 1 and 2 are also simulated with the known durations, as a cross-check of the measured figures,
as is critical-path order alone (the longest remaining path in seconds always first, jobgraph's order
before issue 32), and the best of 2000 list schedules with random priorities estimates the optimum from above: where
even that stays over the bound, no scheduler could meet the 10% target on that DAG.

The lower bound is max(critical path, total work / jobs) over the known durations. A measured makespan
is the time from the first task starting to the last one ending, read from the `--events` file, so
jobgraph's own start-up and YAML parsing are left out but every process spawn is in; the last column
shows what each task took beyond its `sleep` (shell start, spawn, reaping), which the bound leaves out.

    makespan.py --jobgraph PATH [--dags 5] [--tasks 40] [--jobs 2] [--seed 7] [--keep]
"""

import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import options  # noqa: E402

TARGET = 1.10  # issue 7: within 10% of the lower bound once history exists


def generate(seed, size):
    """A layered DAG with some long chains: (ids, needs, durations), in file order.

    About half of the tasks form 2-3 chains that run through many layers; the rest sit in random
    layers and need 1-2 tasks of the layer before. File order is layer by layer, chain tasks last in
    their layer, as a file grown by appending stages tends to be. Durations: uniform 0.05-0.6 s.
    """
    rng = random.Random(seed)
    layers = rng.randint(size // 4, size // 3)
    chain_count = rng.randint(2, 3)
    chain_tasks = size // 2
    chains = []
    remaining = chain_tasks
    for _ in range(chain_count):
        if remaining < 2:
            break
        length = min(remaining, rng.randint(max(2, layers - 3), layers))
        remaining -= length
        start = rng.randint(0, layers - length)
        chains.append(list(range(start, start + length)))
    # (layer, is_chain, chain number, position) for every task
    slots = []
    for number, chain in enumerate(chains):
        for position, layer in enumerate(chain):
            slots.append((layer, 1, number, position))
    for _ in range(size - len(slots)):
        slots.append((rng.randint(0, layers - 1), 0, -1, -1))
    slots.sort(key=lambda slot: (slot[0], slot[1]))
    ids = [f"t{i:02d}" for i in range(len(slots))]
    index_of_chain_link = {(slot[2], slot[3]): i for i, slot in enumerate(slots) if slot[1]}
    by_layer = {}
    for i, slot in enumerate(slots):
        by_layer.setdefault(slot[0], []).append(i)
    needs = []
    for i, (layer, is_chain, number, position) in enumerate(slots):
        chosen = set()
        if is_chain and position > 0:
            chosen.add(index_of_chain_link[(number, position - 1)])
        previous = by_layer.get(layer - 1, [])
        if previous and (not is_chain or rng.random() < 0.3):
            chosen.update(rng.sample(previous, min(len(previous), rng.randint(1, 2))))
        needs.append(sorted(chosen))
    durations = [round(rng.uniform(0.05, 0.6), 2) for _ in slots]
    return ids, needs, durations


def pipeline_yaml(ids, needs, durations, title):
    lines = ["version: 1", f"name: {title}", "tasks:"]
    for task, task_needs, seconds in zip(ids, needs, durations):
        listed = f", needs: [{', '.join(ids[n] for n in task_needs)}]" if task_needs else ""
        lines.append(f"  {task}: {{run: sleep {seconds:.2f}{listed}}}")
    return "\n".join(lines) + "\n"


def remaining_paths(needs, weights):
    """Each task's remaining critical path, itself included (as jobgraph's TaskGraph computes it)."""
    dependents = [[] for _ in needs]
    for task, task_needs in enumerate(needs):
        for need in task_needs:
            dependents[need].append(task)
    memo = {}

    def length(task):
        if task not in memo:
            memo[task] = weights[task] + max((length(d) for d in dependents[task]), default=0.0)
        return memo[task]

    sys.setrecursionlimit(10_000)
    return [length(task) for task in range(len(needs))]


def waits_and_dependents(needs):
    """Per task: how many distinct tasks it waits on, and the tasks that wait on it."""
    waiting_on = [len(set(n)) for n in needs]
    dependents = [[] for _ in needs]
    for task, task_needs in enumerate(needs):
        for need in set(task_needs):
            dependents[need].append(task)
    return waiting_on, dependents


def simulate(needs, durations, jobs, rank):
    """List scheduling: whenever a slot is free, the ready task with the smallest `rank` starts."""
    count = len(needs)
    waiting_on, dependents = waits_and_dependents(needs)
    ready = sorted((task for task in range(count) if waiting_on[task] == 0), key=rank)
    running = []  # (end time, task)
    now, done = 0.0, 0
    while done < count:
        while ready and len(running) < jobs:
            task = ready.pop(0)
            running.append((now + durations[task], task))
        running.sort()
        now, task = running.pop(0)
        done += 1
        for dependent in dependents[task]:
            waiting_on[dependent] -= 1
            if waiting_on[dependent] == 0:
                ready.append(dependent)
        ready.sort(key=rank)
    return now


def depths(needs):
    """Each task's depth: the most needs before it, one after another."""
    depth = {}

    def of(task):
        if task not in depth:
            depth[task] = 1 + max((of(need) for need in needs[task]), default=-1)
        return depth[task]

    return [of(task) for task in range(len(needs))]


def simulate_jobgraph(needs, durations, jobs, estimates):
    """jobgraph's order of ready tasks (Sources/Execution/ReadyOrder.swift) with these expected durations:
    the longest remaining critical path when it is at least half of the expected work left over the slots,
    else the deepest ready task, then file order. Runs on the real `durations`."""
    paths = remaining_paths(needs, estimates)
    depth = depths(needs)
    count = len(needs)
    waiting_on, dependents = waits_and_dependents(needs)
    ready = [task for task in range(count) if waiting_on[task] == 0]
    left = sum(estimates)
    running = []  # (end time, task)
    now, done = 0.0, 0
    while done < count:
        while ready and len(running) < jobs:
            critical = min(ready, key=lambda t: (-paths[t], t))
            task = critical if 2 * paths[critical] * jobs >= left else min(ready, key=lambda t: (-depth[t], t))
            ready.remove(task)
            running.append((now + durations[task], task))
        running.sort()
        now, task = running.pop(0)
        left -= estimates[task]
        done += 1
        for dependent in dependents[task]:
            waiting_on[dependent] -= 1
            if waiting_on[dependent] == 0:
                ready.append(dependent)
    return now


def best_found(needs, durations, jobs, seed, tries=2000):
    """The shortest of many list schedules with random priorities (and the critical-path one): an upper
    estimate of the optimum, showing how much of a gap to the lower bound no schedule can close."""
    rng = random.Random(seed)
    by_seconds = remaining_paths(needs, durations)
    best = simulate(needs, durations, jobs, lambda t: (-by_seconds[t], t))
    for _ in range(tries):
        keys = [rng.random() for _ in needs]
        best = min(best, simulate(needs, durations, jobs, lambda t: keys[t]))
    return best


def measured_makespan(events_path):
    """First start to last end, from a JSON Lines events file; the count of executed tasks; and each
    task's measured duration (its `sleep` plus the cost of starting and reaping the process)."""
    starts, ends, durations = [], [], {}
    with open(events_path, encoding="utf-8") as file:
        for line in file:
            event = json.loads(line)
            if "task" not in event:
                continue
            if event["to"] == "executing":
                starts.append(event["elapsed"])
            if event["from"] == "executing" and event["to"] in ("succeeded", "failed", "cancelled", "up-to-date"):
                ends.append(event["elapsed"])
                if event["to"] == "succeeded":
                    durations[event["task"]] = event.get("duration", 0.0)
    return (max(ends) - min(starts) if starts and ends else float("nan")), len(durations), durations


def run_jobgraph(jobgraph, folder, jobs, events, force):
    arguments = [jobgraph, "run", "pipeline.yaml", "--jobs", str(jobs), "--progress", "plain", "--events", events]
    if force:
        arguments.append("--force")
    result = subprocess.run(arguments, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        sys.exit(f"makespan.py: jobgraph exited {result.returncode} in {folder}:\n{result.stderr}")
    return measured_makespan(os.path.join(folder, events))


def parser(shell=False, prog=None):
    return options.parser(__doc__, ["jobgraph", "dags", "tasks", "jobs", "seed", "keep"], shell, prog)


def main(argv):
    args = parser().parse_args(argv)

    work = tempfile.mkdtemp(prefix="jobgraph-makespan-")
    rows = []
    began = time.monotonic()
    try:
        for number in range(args.dags):
            seed = args.seed + number
            ids, needs, durations = generate(seed, args.tasks)
            folder = os.path.join(work, f"dag{number + 1}")
            os.makedirs(folder)
            with open(os.path.join(folder, "pipeline.yaml"), "w", encoding="utf-8") as file:
                file.write(pipeline_yaml(ids, needs, durations, f"makespan-{seed}"))

            by_seconds = remaining_paths(needs, durations)
            critical_path = max(by_seconds)
            total = sum(durations)
            bound = max(critical_path, total / args.jobs)

            no_history, executed1, _ = run_jobgraph(args.jobgraph, folder, args.jobs, "first.jsonl", force=False)
            with_history, executed2, measured = run_jobgraph(args.jobgraph, folder, args.jobs, "second.jsonl", force=True)
            if executed1 != len(ids) or executed2 != len(ids):
                sys.exit(f"makespan.py: dag {number + 1}: expected {len(ids)} tasks to run each time, "
                         f"saw {executed1} and {executed2}")
            rows.append({
                "dag": number + 1, "seed": seed, "tasks": len(ids), "edges": sum(map(len, needs)),
                "critical_path": critical_path, "work": total, "bound": bound,
                "overhead": statistics.mean(measured[task] - seconds for task, seconds in zip(ids, durations)),
                "no_history": no_history, "with_history": with_history,
                "sim_count": simulate_jobgraph(needs, durations, args.jobs, [1.0] * len(ids)),
                "sim_seconds": simulate_jobgraph(needs, durations, args.jobs, durations),
                "sim_critical": simulate(needs, durations, args.jobs, lambda t: (-by_seconds[t], t)),
                "sim_file": simulate(needs, durations, args.jobs, lambda t: t),
                "best_found": best_found(needs, durations, args.jobs, seed),
            })
            print(f"== dag {number + 1} done ({time.monotonic() - began:.0f}s so far)", file=sys.stderr)
    finally:
        if args.keep:
            print(f"== kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)

    print()
    print(f"makespan with --jobs {args.jobs}, seconds (ratio to the lower bound in parentheses); "
          f"sim = simulated with the known durations")
    header = ["dag", "tasks", "edges", "crit path", "work/jobs", "bound", "no history", "history",
              "file order (sim)", "sim no history", "sim history", "critical path (sim)", "best found (sim)",
              "ms/task over sleep"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))

    def cell(value, bound):
        return f"{value:.2f} ({value / bound:.3f})"

    for row in rows:
        bound = row["bound"]
        print("| " + " | ".join([
            str(row["dag"]), str(row["tasks"]), str(row["edges"]), f"{row['critical_path']:.2f}",
            f"{row['work'] / args.jobs:.2f}", f"{bound:.2f}",
            cell(row["no_history"], bound), cell(row["with_history"], bound), cell(row["sim_file"], bound),
            cell(row["sim_count"], bound), cell(row["sim_seconds"], bound), cell(row["sim_critical"], bound),
            cell(row["best_found"], bound),
            f"{row['overhead'] * 1000:.0f}",
        ]) + " |")
    ratios = {key: [row[key] / row["bound"] for row in rows] for key in ("no_history", "with_history", "sim_file", "sim_seconds", "sim_critical")}
    print()
    for key, label in (("no_history", "no history"), ("with_history", "with history"), ("sim_file", "file order (sim)"),
                       ("sim_seconds", "history (sim)"), ("sim_critical", "critical path (sim)")):
        print(f"{label:>17}: mean ratio {statistics.mean(ratios[key]):.3f}, worst {max(ratios[key]):.3f}")
    met = [row["dag"] for row in rows if row["with_history"] / row["bound"] <= TARGET]
    unreachable = [row for row in rows if row["best_found"] / row["bound"] > TARGET]
    # A DAG whose bound no schedule found comes near cannot fail the target on jobgraph's account.
    missed = [row["dag"] for row in rows if row["dag"] not in met and row not in unreachable]
    print(f"target (with history within {TARGET - 1:.0%} of the bound): met on {len(met)} of {len(rows)} DAGs")
    for row in unreachable:
        print(f"  dag {row['dag']}: even the best schedule found is {row['best_found'] / row['bound'] - 1:.1%} over the "
              f"bound; jobgraph with history is {row['with_history'] / row['best_found'] - 1:.1%} over that schedule")
    if missed:
        print(f"  MISSED on dag {', '.join(map(str, missed))}, where a schedule within the target exists")
    print(f"benchmark time {time.monotonic() - began:.0f}s")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
