#!/usr/bin/env python3
"""kill -9 soak: SIGKILL jobgraph at random moments and check, after every kill, that nothing was lost.

The pipeline has `--tasks` tasks. Task i copies its source `src/i` to `out/i` with `cp`, sleeps
(`--task-sleep`), then appends its need's output (or, for a task with no need, its source again), so a
kill often lands while `out/i` is partial. Each task declares its source and its need's output as
`inputs` and `out/i` as `outputs`, so a rerun finds most of them up to date.

Each round may first rewrite a few sources (`--changes`), starts `jobgraph run`, and SIGKILLs it after
a random delay (uniform up to the last complete run's length, so kills land at every stage: start-up,
the up-to-date pass, tasks writing, history rows). A run that finishes first is not a kill and must
exit 0. After every kill:

- `PRAGMA integrity_check` of `.jobgraph/state.db` (python's own SQLite) says `ok`;
- `jobgraph history --json` shows the killed run as `interrupted` (or no row at all, when the kill
  came before the run was recorded);
- no task reported `up-to-date` by the run that follows (its `--events` JSON) had an output that was
  missing, partial, wrong or older than its source, judged by recomputing every output from the
  sources just before that run started.

After `--kills` kills, a last run must exit 0 and leave every output exactly right. Counts go to
standard output; the exit status is 1 on any violation.

    soak.py --jobgraph PATH [--kills 200] [--tasks 2000] [--jobs 8] [--task-sleep 0.02] [--changes 10]
            [--seed 1] [--dir DIR] [--keep] [--sabotage] [--edit-pipeline]

`--edit-pipeline` puts a new anchor on the pipeline's `version` before each run but the first: other YAML
content, the same pipeline, and no task changes, so each run loads the edited file and checks every task
as a rerun after any edit does.

`--sabotage` proves the checks can fail: after the first complete run it truncates an output behind
jobgraph's back (keeping its time), which the next run wrongly reports up to date (jobgraph checks that
outputs exist, not their content), so the soak must report a violation and exit 1.
"""

import ctypes
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import options  # noqa: E402
from measure import scratch_folder  # noqa: E402
from noop_rerun import restate_version  # noqa: E402


class Soak:
    def __init__(self, args):
        self.args = args
        self.random = random.Random(args.seed)
        self.work = scratch_folder("jobgraph-soak-", args.dir)
        self.ids = [f"t{i:05d}" for i in range(args.tasks)]
        # About four in five tasks need one earlier task, close enough to keep chains short.
        self.need = {}
        for i, task in enumerate(self.ids):
            if i > 0 and self.random.random() < 0.8:
                self.need[task] = self.ids[self.random.randrange(max(0, i - 200), i)]
        self.counts = {
            "kills": 0, "runs finished before the kill": 0, "integrity ok": 0, "history interrupted": 0,
            "killed after the run ended, history says how": 0,
            "killed before the run was recorded": 0, "up-to-date verdicts checked": 0,
            "kills leaving a new partial output": 0, "tasks executed": 0, "sources rewritten": 0, "violations": 0,
        }
        self.last_run_id = 0
        self.estimate = 3.0  # seconds a complete run takes; refined by every run that completes
        self.events_serial = 0

    # -- the pipeline and its files

    def write_pipeline(self):
        os.makedirs(os.path.join(self.work, "src"))
        os.makedirs(os.path.join(self.work, "out"))
        lines = ["version: 1", "tasks:"]
        sleep = self.args.task_sleep
        for task in self.ids:
            self.rewrite_source(task, count=False)
            need = self.need.get(task)
            tail = f"out/{need}" if need else f"src/{task}"
            inputs = [f"src/{task}"] + ([f"out/{need}"] if need else [])
            lines.append(f"  {task}:")
            lines.append(f"    run: \"cp src/{task} out/{task} && sleep {sleep} && cat {tail} >> out/{task}\"")
            if need:
                lines.append(f"    needs: [{need}]")
            lines.append(f"    inputs: [{', '.join(inputs)}]")
            lines.append(f"    outputs: [out/{task}]")
        with open(os.path.join(self.work, "p.yaml"), "w") as file:
            file.write("\n".join(lines) + "\n")

    def rewrite_source(self, task, count=True):
        """New content through a new file, as an editor saving it would."""
        path = os.path.join(self.work, "src", task)
        with open(path + ".new", "w") as file:
            file.write(f"{task} {self.random.getrandbits(64):016x}\n" * self.random.randint(1, 40))
        os.replace(path + ".new", path)
        if count:
            self.counts["sources rewritten"] += 1

    def read(self, path):
        try:
            with open(os.path.join(self.work, path), "rb") as file:
                return file.read()
        except FileNotFoundError:
            return None

    def expected_outputs(self):
        expected = {}
        for task in self.ids:  # a need always comes earlier
            source = self.read(f"src/{task}")
            need = self.need.get(task)
            expected[task] = source + (expected[need] if need else source)
        return expected

    def stale_outputs(self):
        """Tasks whose output is missing, partial or otherwise wrong, or older than its source, with why."""
        expected = self.expected_outputs()
        stale = {}
        partial = set()
        for task in self.ids:
            output = self.read(f"out/{task}")
            if output is None:
                stale[task] = "missing"
            elif output != expected[task]:
                is_prefix = expected[task].startswith(output)
                if is_prefix:
                    partial.add(task)
                stale[task] = "partial" if is_prefix else "wrong content"
            elif os.stat(os.path.join(self.work, "out", task)).st_mtime_ns < \
                    os.stat(os.path.join(self.work, "src", task)).st_mtime_ns:
                stale[task] = "older than its source"
        return stale, partial

    # -- running jobgraph

    @staticmethod
    def adopt_orphans():
        """SIGKILL leaves jobgraph's tasks running (nothing ends them when their parent dies); as a
        subreaper this script inherits them, so it can end them before the next run, as a machine going
        down would, rather than let them write into the next run's outputs."""
        if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
            sys.exit("soak: cannot become a subreaper (prctl failed)")

    @staticmethod
    def end_orphans():
        me = os.getpid()
        while True:
            orphans = []
            for name in os.listdir("/proc"):
                if not name.isdigit():
                    continue
                try:
                    with open(f"/proc/{name}/stat") as file:
                        fields = file.read().rsplit(")", 1)[1].split()
                except (OSError, IndexError):
                    continue
                if int(fields[1]) == me:
                    orphans.append(int(name))
            if not orphans:
                return
            for pid in orphans:
                for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
                    try:
                        kill()
                    except OSError:
                        pass  # not a group leader, or gone already
            for pid in orphans:
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:
                    pass

    def start(self):
        self.events_serial += 1
        events = os.path.join(self.work, f"events-{self.events_serial}.jsonl")
        command = [self.args.jobgraph, "run", "p.yaml", "--jobs", str(self.args.jobs), "--progress", "plain",
                   "--events", events]
        log = open(os.path.join(self.work, "jobgraph.log"), "w")
        process = subprocess.Popen(command, cwd=self.work, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL)
        log.close()
        return process, events

    def events(self, path):
        found = []
        try:
            with open(path) as file:
                for line in file:
                    try:
                        found.append(json.loads(line))
                    except ValueError:
                        pass  # the line the kill cut short
        except FileNotFoundError:
            pass
        return found

    def judge(self, events_path, stale, label):
        """Every task the run reported up to date must have had a correct output when it began."""
        events = self.events(events_path)
        for event in events:
            if event.get("to") == "up-to-date":
                self.counts["up-to-date verdicts checked"] += 1
                task = event.get("task")
                if task in stale:
                    self.violation(f"{label}: {task} was reported up-to-date, but its output was {stale[task]}")
            if event.get("to") in ("succeeded", "failed"):
                self.counts["tasks executed"] += 1
        return events

    def violation(self, message):
        self.counts["violations"] += 1
        print(f"VIOLATION: {message}", flush=True)

    def check_after_kill(self, label, finished=None):
        """`finished`: the run-finished event the killed run wrote, if it got that far."""
        database = os.path.join(self.work, ".jobgraph", "state.db")
        if not os.path.exists(database):
            self.counts["killed before the run was recorded"] += 1
            return
        try:
            connection = sqlite3.connect(database)
            result = [row[0] for row in connection.execute("PRAGMA integrity_check")]
            connection.close()
        except sqlite3.DatabaseError as error:
            result = [str(error)]
        if result == ["ok"]:
            self.counts["integrity ok"] += 1
        else:
            self.violation(f"{label}: PRAGMA integrity_check says {result}")

        history = subprocess.run([self.args.jobgraph, "history", "p.yaml", "--json", "--runs", "1"], cwd=self.work,
                                 capture_output=True, text=True)
        if history.returncode != 0:
            self.violation(f"{label}: jobgraph history failed ({history.returncode}): {history.stderr.strip()}")
            return
        runs = json.loads(history.stdout)["runs"]
        latest = runs[0] if runs else {"id": 0, "outcome": None}
        if latest["id"] == self.last_run_id:
            self.counts["killed before the run was recorded"] += 1
        elif latest["outcome"] == "interrupted":
            self.counts["history interrupted"] += 1
        elif finished is not None and latest["outcome"] == ("succeeded" if finished.get("exit_status") == 0 else "failed"):
            self.counts["killed after the run ended, history says how"] += 1
        else:
            self.violation(f"{label}: the history shows the killed run {latest['id']} as {latest['outcome']!r}")
        self.last_run_id = latest["id"]

    def note_finished_run(self, label, status, began):
        duration = time.monotonic() - began
        self.estimate = max(0.05, duration * 1.2)
        if status != 0:
            self.violation(f"{label}: a run that was not killed exited {status}; see {self.work}/jobgraph.log")
        history = subprocess.run([self.args.jobgraph, "history", "p.yaml", "--json", "--runs", "1"], cwd=self.work,
                                 capture_output=True, text=True)
        if history.returncode == 0 and json.loads(history.stdout)["runs"]:
            self.last_run_id = json.loads(history.stdout)["runs"][0]["id"]

    def sabotage(self):
        """Truncates one output that is correct now, keeping its modification time."""
        task = self.ids[-1]
        path = os.path.join(self.work, "out", task)
        times = os.stat(path)
        with open(path, "r+b") as file:
            file.truncate(max(1, times.st_size // 2))
        os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))
        print(f"sabotage: truncated out/{task} behind jobgraph's back", flush=True)

    # -- the soak

    def run(self):
        self.adopt_orphans()
        self.write_pipeline()
        print(f"soak: {self.args.tasks} tasks, {self.args.kills} kills, jobs {self.args.jobs}, in {self.work}",
              flush=True)
        sabotaged = not self.args.sabotage
        round_number = 0
        while self.counts["kills"] < self.args.kills:
            round_number += 1
            label = f"round {round_number}"
            if round_number > 1:
                for task in self.random.sample(self.ids, min(self.args.changes, len(self.ids))):
                    self.rewrite_source(task)
                if self.args.edit_pipeline:
                    restate_version(os.path.join(self.work, "p.yaml"), f"round{round_number}")
            stale, partial_before = self.stale_outputs()
            delay = self.random.uniform(0, self.estimate)
            began = time.monotonic()
            process, events = self.start()
            try:
                status = process.wait(timeout=delay)
                killed = False
            except subprocess.TimeoutExpired:
                process.send_signal(signal.SIGKILL)
                status = process.wait()
                killed = status == -signal.SIGKILL
            self.end_orphans()
            self.judge(events, stale, label)
            # A kill that lands after the run wrote its end (while it prints its summary or exits) finds
            # the run complete, and the history rightly says how it ended.
            ended = [event for event in self.events(events) if event.get("event") == "run-finished"]
            if os.path.exists(events):
                os.remove(events)
            if killed:
                self.counts["kills"] += 1
                _, partial = self.stale_outputs()
                if partial - partial_before:
                    self.counts["kills leaving a new partial output"] += 1
                self.check_after_kill(label, ended[-1] if ended else None)
            else:
                self.counts["runs finished before the kill"] += 1
                self.note_finished_run(label, status, began)
                if not sabotaged:
                    self.sabotage()
                    sabotaged = True
            if self.counts["kills"] and self.counts["kills"] % 20 == 0 and killed:
                print(f"  {self.counts['kills']} kills, {self.counts['violations']} violations", flush=True)

        stale, _ = self.stale_outputs()
        process, events = self.start()
        status = process.wait()
        self.judge(events, stale, "final run")
        if status != 0:
            self.violation(f"the final run exited {status}; see {self.work}/jobgraph.log")
        left, _ = self.stale_outputs()
        for task, why in sorted(left.items())[:10]:
            self.violation(f"after the final run, out/{task} is {why}")
        if len(left) > 10:
            self.violation(f"… and {len(left) - 10} more outputs are not right")
        final_states = {}
        for event in self.events(events):
            if "task" in event and "to" in event:
                final_states[event["task"]] = event["to"]
        unfinished = [task for task in self.ids if final_states.get(task) not in ("succeeded", "up-to-date")]
        if unfinished:
            self.violation(f"the final run did not finish {len(unfinished)} tasks, e.g. {unfinished[:5]}")

        print("soak results:")
        for name, value in self.counts.items():
            print(f"  {name}: {value}")
        print(f"  final run: exit {status}, {len(self.ids) - len(left)} of {len(self.ids)} outputs right")
        return self.counts["violations"] == 0


def parser(shell=False, prog=None):
    # --binary is the shell script's (it sets JOBGRAPH); the module takes --jobgraph.
    names = ["jobgraph", "kills", "tasks", "jobs", "task_sleep", "changes", "seed", "dir", "keep", "sabotage", "edit_pipeline"]
    helps = {"tasks": "tasks in the pipeline", "jobs": "--jobs of each run", "seed": "seed of the kill moments and changes",
             "keep": "keep the work folder (its path is printed)"}
    return options.parser(__doc__, names + (["binary"] if shell else []), shell, prog, helps=helps,
                          tasks=2000, jobs=8, seed=1)


def main(argv):
    args = parser().parse_args(argv)

    soak = Soak(args)
    try:
        clean = soak.run()
    finally:
        if args.keep:
            print(f"kept {soak.work}")
        else:
            shutil.rmtree(soak.work, ignore_errors=True)
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
