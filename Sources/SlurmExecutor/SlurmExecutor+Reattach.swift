import Foundation
import JobGraphBasics
import Execution
import PipelineModel

/// A run after a killed one (docs/pipeline.md, "Reattach"): the killed run's jobs, written down in `state.db`
/// as it submitted them (`JobLedger`), are found in Slurm by their job name, `jobgraph-TOKEN`.
///
/// In jobs mode the new run takes them over: a job still pending or running is followed as one of its own
/// when its task starts (`BatchJobQueue.adopt`), and one that ended while no jobgraph watched ends the
/// task's attempt with the outcome its status file holds; only what is left is submitted, and a task edited
/// since (its `definition` differs) runs anew. Allocation mode cannot take over worker steps, which read
/// their tasks from the killed jobgraph's pipes and carried their output back through them: it ends them
/// and reuses the killed run's allocation while it runs (`reuseAllocation`), and the unfinished tasks run
/// again. With `--no-reattach`, and for `jobgraph cancel`, everything of the killed runs is cancelled.
extension SlurmExecutor {
    /// Writes the run down, then takes over or cancels what killed runs left in Slurm.
    /// - Returns: lines for the user: which runs died, and what became of their jobs.
    func takeOver() -> [String] {
        guard let ledger else { return [] }
        let dead: [LedgerRun]
        do {
            try ledger.begin(token: runToken)
            // The run a nested run is nested in is alive, and has dealt with the killed runs already.
            dead = try isNested ? [] : ledger.unreleasedRuns(except: runToken)
        } catch {
            return ["warning: slurm: cannot read or write the run's jobs in .jobgraph/state.db (\(error)); "
                    + "if jobgraph is killed, the next run will not find them"]
        }
        guard !dead.isEmpty else { return [] }
        let died = Self.died(dead)
        let queued = Self.queuedJobs(of: dead, cluster: cluster)
        if reattaches, mode == .allocation, let queued {
            return [reuseAllocation(of: dead, queued: queued, died: died, ledger: ledger)]
        }
        guard reattaches, mode == .jobs, let batch, let queued else {
            return [Self.cancel(dead, queued: queued, cluster: cluster, ledger: ledger, saying: { "slurm: \(died); \($0)" })]
        }
        let (runs, found) = Self.findingIntendedJobs(of: dead, queued: queued)
        if !found.isEmpty { try? ledger.submitted(found) }  // not written: the next run finds them again the same way
        // The last job of each task decides: an earlier attempt's job was followed to its end, or superseded.
        var latest: [TaskID: SubmittedJob] = [:]
        for run in runs { for job in run.jobs { if let task = job.task { latest[task] = job } } }
        var live: [SubmittedJob] = [], ended: [SubmittedJob] = []
        for job in latest.values.sorted(by: { $0.job.compare($1.job, options: .numeric) == .orderedAscending })
        where job.outcome == nil && job.statusFile != nil {
            if let state = queued.state(of: job.job), BatchJobQueue.liveStates.contains(state) {
                live.append(job)
            } else if Self.recordsAnEnd(job.statusFile ?? "") {
                ended.append(job)
            }  // ended without recording how: its task is submitted again
        }
        let adopted = Set((live + ended).map(\.job))
        // What no task will take over (an allocation, a superseded attempt) is cancelled now.
        let stray = queued.liveJobs.filter { !adopted.contains($0) }
        if !stray.isEmpty { _ = try? cluster.scancel.run(stray) }  // a job that ended meanwhile needs none
        adoptions.withLock { adoptions in
            for job in live { adoptions[job.task!] = (job, true) }
            for job in ended { adoptions[job.task!] = (job, false) }
        }
        adoptedRuns.withLock { $0 = dead.map(\.token) }
        batch.follow(names: dead.map { "jobgraph-" + $0.token })
        var line = "slurm: \(died); "
        if live.isEmpty {
            line += "none of its Slurm jobs is still pending or running"
        } else {
            line += "reattaching to \(String(counting: live.count, "Slurm job")) (\(live.map(\.job).joined(separator: " ")))"
        }
        if !ended.isEmpty { line += "; \(String(counting: ended.count, "job")) ended meanwhile, and count as they ended" }
        if !found.isEmpty {
            line += "; it was killed before it wrote down \(found.map(\.job).joined(separator: " ")), found by name and comment"
        }
        if !stray.isEmpty { line += "; cancelled \(stray.joined(separator: " ")), which no task takes over" }
        return [line]
    }

    /// The jobs killed runs submitted but were killed before writing down (`SubmittedJob.intended`), found
    /// among the jobs Slurm lists under the run's name by their comment: the task's id, or for an array its
    /// fan-out's name (the item is the array's `index`). The latest such job not written down is the one; an
    /// intended job not found was not submitted, or Slurm has forgotten it, and its task runs again.
    /// - Returns: the runs with the intended jobs found given their ids and the others left out, and those found.
    static func findingIntendedJobs(of dead: [LedgerRun], queued: QueuedJobs) -> (runs: [LedgerRun], found: [SubmittedJob]) {
        var found: [SubmittedJob] = []
        let runs = dead.map { run -> LedgerRun in
            let name = "jobgraph-" + run.token
            let written = Set(run.jobs.filter { $0.intended == nil }.map(\.job))
            var claimed: Set<String> = []
            var jobs: [SubmittedJob?] = run.jobs
            // The latest intents first: each claims the latest job that fits.
            for (position, job) in run.jobs.enumerated().reversed() {
                guard let (index, count) = job.intended else { continue }
                jobs[position] = nil
                guard job.outcome == nil, let task = job.task else { continue }  // refused by Slurm
                let comment = count == 1 ? task.rawValue : String(task.rawValue.prefix { $0 != "[" })
                let candidates = Set(queued.described.compactMap { id, described -> String? in
                    guard described.name == name, described.comment == comment, id.contains("_") == (count > 1) else { return nil }
                    return String(id.prefix { $0 != "_" })
                }).filter { id in
                    !claimed.contains(count == 1 ? id : "\(id)_\(index)") && !written.contains { $0 == id || $0.hasPrefix(id + "_") }
                }
                guard let id = candidates.max(by: { $0.compare($1, options: .numeric) == .orderedAscending }) else { continue }
                var submitted = job
                submitted.job = count == 1 ? id : "\(id)_\(index)"
                claimed.insert(submitted.job)
                jobs[position] = submitted
                found.append(submitted)
            }
            return LedgerRun(token: run.token, run: run.run, jobs: jobs.compactMap { $0 })
        }
        return (runs, found.reversed())
    }

    /// Allocation mode: reuses the killed runs' allocation when it still runs and is the one this run asks for
    /// (`allocationDefinition`). Its steps are ended first (`scancel JOB.STEP`): the worker steps they wrote
    /// down, and any other a task started, so the tasks that were running in them run again; then `prepare()`
    /// starts this run's own steps in it. Otherwise, everything they left is cancelled and the run gets its own.
    /// - Returns: the line for the user.
    private func reuseAllocation(of dead: [LedgerRun], queued: QueuedJobs, died: String, ledger: any JobLedger) -> String {
        let records = dead.flatMap(\.jobs)
        let cancelAll = { (why: String) in
            Self.cancel(dead, queued: queued, cluster: self.cluster, ledger: ledger) { "slurm: \(died); \($0)\(why)" }
        }
        // The latest run's, if several killed runs reused one another's.
        guard let record = records.last(where: { $0.kind == .allocation && queued.state(of: $0.job) == "RUNNING" }) else {
            return cancelAll("; its unfinished tasks run again")
        }
        let job = record.job
        guard record.definition == allocationDefinition else {
            return cancelAll(record.definition == nil
                ? "; its allocation was asked for by an older jobgraph, so its unfinished tasks run again in a new one"
                : "; it asked for another allocation (--jobs or the top-level slurm settings differ), so its unfinished tasks run again in a new one")
        }
        guard let steps = Self.liveSteps(of: job, cluster: cluster), let size = Self.size(of: job, cluster: cluster) else {
            return cancelAll("; squeue did not describe its allocation \(job), so its unfinished tasks run again in a new one")
        }
        // Every step in it is the killed run's: its worker steps, and the steps of its own that a task started
        // (`srun` in a task's command, or a task's step in a run with a `parallel` task), which it could not
        // write down. All of them end, so nothing of the killed run runs beside this run's steps.
        let written = Set(records.filter { $0.kind == .workerStep }.map(\.job))
        let (workers, others) = (steps.filter { written.contains($0) }, steps.filter { !written.contains($0) })
        // Named before the steps end: a worker whose task's own step ends first sees the task's command fail
        // and writes its end, and the line then left that task out (SlurmReattachTests, once in a full run).
        let running = steps.isEmpty ? [] : interruptedTasks(of: dead)
        if !steps.isEmpty {
            let output = try? cluster.scancel.run(steps)  // a step that ended meanwhile needs none; the wait below tells
            guard output != nil, Self.stepsEnd(steps, of: job, cluster: cluster) else {
                return cancelAll("; its steps \(steps.joined(separator: " ")) did not end, so its unfinished tasks run again in a new one")
            }
        }
        // Everything else of theirs (a batch job of a jobs-mode run) goes.
        let stray = queued.liveJobs.filter { $0 != job }
        if !stray.isEmpty { _ = try? cluster.scancel.run(stray) }  // one that ended meanwhile needs no cancel
        allocation.withLock { $0 = job }
        // Released with this run's own at its end, so that a run killed before then leaves the next one
        // the allocation under its name too (`queuedJobs` asks for every unreleased run's name).
        adoptedRuns.withLock { $0 = dead.map(\.token) }
        var line = "slurm: \(died); reusing its allocation \(job) (\(size))"
        if !steps.isEmpty {
            let ended = [(workers, "worker step"), (others, "other step")].filter { !$0.0.isEmpty }
                .map { "\(String(counting: $0.0.count, $0.1)) (\($0.0.joined(separator: " ")))" }
            line += "; ended its " + ended.joined(separator: " and ")
            if !running.isEmpty {
                line += ", so \(Self.list(running.map { "'\($0.rawValue)'" })), which \(running.count == 1 ? "was" : "were") running in them, run again"
            }
        }
        if !stray.isEmpty { line += "; cancelled \(stray.joined(separator: " "))" }
        return line
    }

    /// The tasks whose commands had begun in the killed runs' worker steps and not ended: their status
    /// files (`TASK.ATTEMPT.RUN.status`) hold the step's id, and no end.
    private func interruptedTasks(of dead: [LedgerRun]) -> [TaskID] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: workDirectory)) ?? []  // none: nothing to name
        var byFileName: [String: TaskID] = [:]
        for node in graph.nodes { byFileName[Self.fileName(node.id)] = node.id }
        var tasks: Set<TaskID> = []
        for token in dead.map(\.token) {
            for file in files where file.hasSuffix(".\(token).status") && !Self.recordsAnEnd("\(workDirectory)/\(file)") {
                // `NAME.ATTEMPT.TOKEN.status`: the name may hold dots itself.
                let name = file.split(separator: ".").dropLast(3).joined(separator: ".")
                if let task = byFileName[name] { tasks.insert(task) }
            }
        }
        return tasks.sorted { $0.rawValue < $1.rawValue }
    }

    /// The job steps of allocation `job` that run tasks (`1234.0`; not Slurm's own `extern` or `batch`),
    /// in one `squeue`; `nil` when it did not answer.
    static func liveSteps(of job: String, cluster: SlurmCluster) -> [String]? {
        guard let output = try? cluster.squeue.run(["--noheader", "--steps", "--jobs=\(job)", "--format=%i"]),
              output.succeeded else { return nil }  // the caller says so
        return output.standardOutput.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.hasPrefix(job + ".") && $0.dropFirst(job.count + 1).allSatisfy(\.isNumber) }
            .sorted { $0.compare($1, options: .numeric) == .orderedAscending }
    }

    /// Waits until none of `steps` is listed any more, for at most 30 s (Slurm's KillWait is 30 s by default).
    /// - Returns: whether they all ended.
    static func stepsEnd(_ steps: [String], of job: String, cluster: SlurmCluster) -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let live = liveSteps(of: job, cluster: cluster), Set(live).isDisjoint(with: steps) { return true }
            usleep(100_000)
        }
        return false
    }

    /// "1 node, 41 min left", from one `squeue`; `nil` when it did not answer.
    static func size(of job: String, cluster: SlurmCluster) -> String? {
        guard let output = try? cluster.squeue.run(["--noheader", "--jobs=\(job)", "--format=%D|%L"]), output.succeeded else { return nil }  // the caller says so
        let fields = output.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|").map(String.init)
        guard fields.count == 2, let nodes = Int(fields[0]) else { return nil }
        let left = SlurmSpec.seconds(fromSlurmTime: fields[1]).map { "\(Int($0 / 60)) min left" } ?? "no time limit"
        return "\(String(counting: nodes, "node")), \(left)"
    }

    /// "'a'", "'a' and 'b'", "'a', 'b' and 'c'".
    static func list(_ items: [String]) -> String {
        items.count < 2 ? items.joined() : items.dropLast().joined(separator: ", ") + " and " + items.last!
    }

    /// At the run's end: a killed run's job whose task never started here (deselected, or up to date) is cancelled.
    func cancelUnclaimedAdoptions() {
        let left = adoptions.withLock { adoptions in
            defer { adoptions = [:] }
            return adoptions.values.filter(\.isLive).map(\.job.job)
        }
        if !left.isEmpty { _ = try? cluster.scancel.run(left) }  // one that ended needs no cancel
    }

    /// `jobgraph cancel`: cancels every job killed runs of the pipeline left in Slurm, starting nothing.
    /// - Returns: what was cancelled, or a sentence saying there was nothing to.
    /// - Throws: when the Slurm clients cannot be found or the controller does not answer.
    public static func cancelLeftBehind(ledger: any JobLedger, environment: [String: String]) throws -> [String] {
        let dead = try ledger.unreleasedRuns(except: "")
        guard !dead.isEmpty else { return ["nothing to cancel: no killed run of this pipeline left jobs in Slurm"] }
        let cluster = try SlurmCluster.connect(environment: environment)
        return [cancel(dead, queued: queuedJobs(of: dead, cluster: cluster), cluster: cluster, ledger: ledger) { "\(died(dead)); \($0)" }]
    }

    /// Cancels what `dead` left pending or running, in one `scancel`, and releases the runs.
    /// - Parameter saying: makes the line from what was done ("cancelled its 2 Slurm jobs (12 13)").
    private static func cancel(_ dead: [LedgerRun], queued: QueuedJobs?, cluster: SlurmCluster, ledger: any JobLedger,
                               saying: (String) -> String) -> String {
        guard let queued else { return saying("squeue did not answer, so its jobs are left as they are") }
        let ids = queued.liveJobs
        guard !ids.isEmpty else {
            try? ledger.release(dead.map(\.token))  // unreleased, the next run looks again and finds nothing
            return saying("none of its Slurm jobs is left")
        }
        let output = try? cluster.scancel.run(ids)  // a failure is said below
        guard output?.succeeded == true else { return saying("scancel \(ids.joined(separator: " ")) failed: \(output?.message ?? "not run")") }
        try? ledger.release(dead.map(\.token))  // unreleased, the next run looks again and finds them gone
        return saying("cancelled its \(String(counting: ids.count, "Slurm job")) (\(ids.joined(separator: " ")))")
    }

    /// "run 7 died", "runs 6 and 7 died".
    static func died(_ dead: [LedgerRun]) -> String {
        let numbers = dead.map { $0.run.map(String.init) ?? "?" }
        return numbers.count == 1 ? "run \(numbers[0]) died" : "runs \(numbers.dropLast().joined(separator: ", ")) and \(numbers.last!) died"
    }

    /// Whether a status file holds how the commands ended (its second line), not only that they began.
    static func recordsAnEnd(_ statusFile: String) -> Bool {
        let text = (try? String(contentsOfFile: statusFile, encoding: .utf8)) ?? ""  // none: the job never began
        return text.split(separator: "\n").count >= 2
    }

    /// The killed runs' jobs Slurm still knows, by their job names, in one `squeue`; `nil` when it did not answer.
    static func queuedJobs(of dead: [LedgerRun], cluster: SlurmCluster) -> QueuedJobs? {
        let names = dead.map { "jobgraph-" + $0.token }.joined(separator: ",")
        guard let output = try? cluster.squeue.run(["--noheader", "--array", "--states=all", "--name=\(names)", "--format=%i|%T|%j|%k"]),
              output.succeeded else { return nil }  // the caller says so
        var queued = QueuedJobs(states: [:])
        for line in output.standardOutput.split(separator: "\n") {
            // The comment is last: a task's id may hold a `|`.
            let fields = line.split(separator: "|", maxSplits: 3, omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard fields.count == 4 else { continue }
            queued.states[fields[0]] = fields[1]
            queued.described[fields[0]] = (fields[2], fields[3])
        }
        return queued
    }
}

/// Jobs `squeue` lists, with their states (`RUNNING`); a pending array not yet split is `12_[0-3]`.
struct QueuedJobs {
    var states: [String: String]
    /// Each job's name (`jobgraph-TOKEN`) and comment (its task's id, an array's fan-out name).
    var described: [String: (name: String, comment: String)] = [:]

    /// The state of job `id` (`12`, or an array item's `12_3`), `nil` when Slurm no longer lists it.
    func state(of id: String) -> String? {
        if let state = states[id] { return state }
        guard let underscore = id.firstIndex(of: "_") else { return nil }
        let array = id[..<underscore] + "_["
        return states.first { $0.key.hasPrefix(array) }?.value
    }

    /// The ids of the jobs still pending or running, for `scancel` (an unsplit array by its own id).
    var liveJobs: [String] {
        states.filter { BatchJobQueue.liveStates.contains($0.value) }.keys
            .map { $0.contains("_[") ? String($0.prefix { $0 != "_" }) : $0 }
            .sorted { $0.compare($1, options: .numeric) == .orderedAscending }
    }
}

extension SlurmExecutor {
    /// Ends an attempt of allocation mode. A failure without a cause is checked against the allocation: when
    /// Slurm has ended it (its time limit, a node failure, a preemption), the attempt carries the allocation's
    /// state (`slurm_state`) and the cause `retry_on` names, as a batch job's does. The one `squeue` runs off
    /// the caller's thread, which may be the event loop's.
    func finishStep(_ result: TaskResult, reporter: TaskReporter) {
        guard case .failed(let code, let reason, nil) = result, let job = allocation.withLock({ $0 }), !cancelled.withLock({ $0 }),
              !interrupted.withLock({ $0 }) else { return reporter.finished(result) }
        DispatchQueue.global().async { [self] in
            guard let state = Self.endedState(ofAllocation: job, cluster: cluster) else { return reporter.finished(result) }
            self.allocationEnd.withLock { $0 = state }
            reporter.executorState(state)
            reporter.finished(BatchJob.naming(state, in: .failed(exitCode: code, reason: reason, cause: BatchJobQueue.cause(ofState: state))))
        }
    }

    /// How Slurm ended allocation `job`; `nil` while it runs, or when `squeue` does not say. A job whose steps
    /// are still being stopped (`COMPLETING`) is asked again, for at most 15 s (KillWait is 30 s by default,
    /// but the step that failed is gone already).
    static func endedState(ofAllocation job: String, cluster: SlurmCluster) -> String? {
        for _ in 0..<30 {
            guard let output = try? cluster.squeue.run(["--noheader", "--jobs=\(job)", "--states=all", "--format=%i|%T"]),
                  output.succeeded else { return nil }  // forgotten already: nothing to say
            let line = output.standardOutput.split(separator: "\n").first { $0.hasPrefix(job + "|") }
            let fields = line?.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } ?? []
            guard fields.count >= 2, fields[1] != "RUNNING" else { return nil }
            let state = fields[1]
            if !BatchJobQueue.liveStates.contains(state) { return state == "COMPLETED" ? nil : state }
            usleep(500_000)
        }
        return nil
    }
}
