import Foundation
import JobGraphBasics
import Execution
import PipelineModel

/// Jobs mode: submits one batch job per attempt and follows them all with one `sacct` per poll where
/// accounting works (by the run's job name), else one `squeue`.
///
/// Every Slurm command of the mode runs on one serial queue, a pass at a time: cancel what was asked
/// to stop (one `scancel`), submit what waits while fewer than `queueSize` jobs are in Slurm and the
/// submission rate allows (items of a static `foreach` that wait together go in as one job array),
/// poll the status of every live job in one `squeue`, forward new log lines, and end the jobs Slurm
/// has ended. A pass that sees a change polls again soon; each quiet pass waits longer, up to
/// `pollInterval`. jobgraph keeps the graph itself: no Slurm dependencies, no `sbatch --wait`.
final class BatchJobQueue: Sendable {
    private struct State {
        var waiting: [BatchJob] = []
        /// Submitted and not yet ended, by Slurm id.
        var live: [String: BatchJob] = [:]
        var cancelRequests: Set<String> = []
        /// Ids already given to `scancel`.
        var cancelled: Set<String> = []
        var nextSubmission: ContinuousClock.Instant?
        /// When the next pass is due, if one is scheduled.
        var nextPass: ContinuousClock.Instant?
        /// When the next poll is due (`nil`: now). A pass that a submission or a cancel asks for polls only
        /// then: the status calls keep their own pace, however many jobs go in.
        var nextPoll: ContinuousClock.Instant?
        var interval: Double = BatchJobQueue.shortestInterval
        var arrays = 0
        /// When the first and the latest waiting item of each fan-out arrived, by array key.
        var arrivals: [String: (first: ContinuousClock.Instant, latest: ContinuousClock.Instant)] = [:]
        /// Where the cause of each job's failure goes before the job ends, by job (see `submit`).
        var causes: [ObjectIdentifier: Locked<FailureCause?>] = [:]
        /// What the last poll said the run waits for (pending jobs), so that only a change is said.
        var waitingSaid: String?
        var reportWaiting: (@Sendable (String?) -> Void)?
        /// The first job that could not be written down in `state.db`, for the summary.
        var ledgerProblem: String?
        /// The job names of killed runs whose jobs this run took over: `sacct` asks for them with the run's own.
        var adoptedNames: [String] = []
    }

    static let shortestInterval = 0.1
    /// `sacct` asks the accounting database, which is costlier to the site than `squeue`: never more
    /// often than this (Snakemake-Profiles/slurm#74: ten `sacct` calls a second).
    static let shortestAccountingInterval = 0.5
    /// The items of a fan-out reach `submit` one by one, each after its own up-to-date check on a worker:
    /// its array waits until none has arrived for `arrayQuietPeriod` seconds, and at most `arrayLongestWait`.
    static let arrayQuietPeriod = 0.1
    static let arrayLongestWait = 1.0
    let queueSize: Int
    private let cluster: SlurmCluster
    private let directory: String
    /// The run's token, in the names of its job array scripts as in its attempt files (`SlurmExecutor`).
    private let runToken: String
    /// Every job of the run has this `--job-name` (the task's id goes in `--comment`): one `sacct --name`
    /// finds them all.
    let jobName: String
    /// When the queue was made: `sacct` looks no further back.
    private let since = Date()
    private let submitRate: Double?
    private let pollInterval: Double
    private let queue = DispatchQueue(label: "jobgraph.slurm.jobs")
    private let state = Locked(State())
    private let clock = ContinuousClock()

    /// Where each job is written down once submitted, before the next submission; `nil` for none.
    private let ledger: (any JobLedger)?

    init(cluster: SlurmCluster, directory: String, runToken: String, queueSize: Int, submitRate: Double?, pollInterval: Double,
         ledger: (any JobLedger)? = nil) {
        self.runToken = runToken
        self.ledger = ledger
        jobName = "jobgraph-" + runToken
        self.cluster = cluster
        self.directory = directory
        self.queueSize = queueSize
        self.submitRate = submitRate
        self.pollInterval = max(pollInterval, Self.shortestInterval)
    }

    /// - Parameter definition: what the job runs, as a digest, written down with it (`SlurmExecutor.definition`).
    func submit(work: TaskWork, commands: [String], concurrently: Bool, spec: SlurmSpec, statusFile: String, arrayKey: String?,
                definition: String, reporter: TaskReporter) -> any TaskExecution {
        enqueue(reporter: reporter) { [self] reporter in
            try BatchJob(work: work, commands: commands, concurrently: concurrently, spec: spec, statusFile: statusFile,
                         arrayKey: arrayKey, runToken: runToken, definition: definition, ledger: ledger, reporter: reporter, queue: self)
        } place: { [clock] job, state in
            state.waiting.append(job)
            if let key = job.arrayKey {
                let now = clock.now
                state.arrivals[key] = (state.arrivals[key]?.first ?? now, now)
            }
        }
    }

    /// Takes over a job a killed run submitted (docs/pipeline.md, "Reattach"): the next poll follows it as
    /// one of this run's, and it ends as it would have for its own run, from its own status file.
    func adopt(_ record: SubmittedJob, statusFile: String, work: TaskWork, commands: [String], spec: SlurmSpec,
               reporter: TaskReporter) -> any TaskExecution {
        enqueue(reporter: reporter) { [self] reporter in
            BatchJob(work: work, commands: commands, spec: spec, statusFile: statusFile, slurmID: record.job, runToken: record.runToken,
                     ledger: ledger, reporter: reporter, queue: self)
        } place: { job, state in
            state.live[record.job] = job
        }
    }

    /// Hands `makeJob` a reporter that adds the failure's cause, and `place` the job under the state's lock.
    private func enqueue(reporter: TaskReporter, makeJob: (TaskReporter) throws -> BatchJob,
                         place: (BatchJob, inout State) -> Void) -> any TaskExecution {
        // The failure's cause, from Slurm's state (or jobgraph's own timeout), is set by the pass that ends
        // the job, just before the job reports its result (`endJobs`).
        let cause = Locked<FailureCause?>(nil), key = Locked<ObjectIdentifier?>(nil)
        var causeReporter = reporter
        let finished = reporter.finished
        causeReporter.finished = { [weak self] result in
            if let key = key.withLock({ $0 }) { _ = self?.state.withLock { $0.causes.removeValue(forKey: key) } }
            guard case .failed(let code, let reason, nil) = result, let cause = cause.withLock({ $0 }) else { return finished(result) }
            finished(.failed(exitCode: code, reason: reason, cause: cause))
        }
        let job: BatchJob
        do {
            job = try makeJob(causeReporter)
            key.withLock { $0 = ObjectIdentifier(job) }
        } catch {
            let failed = FailedStart()
            queue.async { reporter.finished(.failed(exitCode: nil, reason: "cannot prepare the Slurm job: \(error)")) }
            return failed
        }
        state.withLock { state in
            state.causes[ObjectIdentifier(job)] = cause
            place(job, &state)
        }
        // The items of a fan-out that start together gather into one array (see `arrayHold`).
        schedulePass(after: job.arrayKey == nil ? 0 : Self.arrayQuietPeriod)
        return job
    }

    /// Cancels jobs that are not the run's own (a killed run's job that no task takes over) with the next pass's `scancel`.
    func cancel(ids: [String]) {
        state.withLock { state in
            for id in ids where !state.cancelled.contains(id) { state.cancelRequests.insert(id) }
        }
        schedulePass(after: 0)
    }

    /// Polls follow the jobs named `names` (killed runs' jobs taken over) with the run's own.
    func follow(names: [String]) {
        state.withLock { $0.adoptedNames += names }
    }

    /// Keeps the first failure to write a job down, for the summary (`ledgerProblem`).
    func recordingFailed(_ problem: String) {
        state.withLock { if $0.ledgerProblem == nil { $0.ledgerProblem = problem } }
    }

    /// The first job the run could not write down in `state.db`: a run killed later would leave it behind.
    var ledgerProblem: String? { state.withLock(\.ledgerProblem) }

    /// Where the polls say how many of the run's jobs pend, and why (`TaskExecutor.reportWaiting(to:)`).
    func reportWaiting(to report: @escaping @Sendable (String?) -> Void) {
        state.withLock { $0.reportWaiting = report }
    }

    /// Says "waiting for Slurm: 2 of 3 jobs pending (Resources)" when it differs from the last time.
    private func sayWaiting(pending: [String: Int], live: Int) {
        var text: String?
        let count = pending.values.reduce(0, +)
        if count > 0 {
            let reasons = pending.sorted { $0.value == $1.value ? $0.key < $1.key : $0.value > $1.value }.map(\.key).joined(separator: ", ")
            text = count == 1 && live == 1
                ? "waiting for Slurm: job pending (\(reasons))"
                : "waiting for Slurm: \(count) of \(live) jobs pending (\(reasons))"
        }
        let report = state.withLock { state -> (@Sendable (String?) -> Void)? in
            guard state.waitingSaid != text else { return nil }
            state.waitingSaid = text
            return state.reportWaiting
        }
        report?(text)
    }

    /// Stops a job: dropped if not submitted yet, else cancelled by the next pass's one `scancel`.
    func cancel(_ job: BatchJob) {
        let unsent = state.withLock { state -> Bool in
            if let index = state.waiting.firstIndex(where: { $0 === job }) {
                state.waiting.remove(at: index)
                return true
            }
            let id = job.state.withLock { job -> String? in
                if job.slurmID == nil { job.stopRequested = true }
                return job.slurmID
            }
            if let id, !state.cancelled.contains(id) { state.cancelRequests.insert(id) }
            return false
        }
        if unsent {
            queue.async { job.rejected("stopped before it was submitted to Slurm") }
        } else {
            schedulePass(after: 0)
        }
    }

    /// Ctrl-C, SIGTERM or the end of the run: every live job of the run in one `scancel`, and nothing
    /// waiting is submitted. Returns at once: the jobs are marked cancelled here, so that no pass cancels
    /// them again, and `scancel` runs on the mode's queue, which then hands `note` its line for the summary
    /// (none when no job was live).
    func cancelEverything(note: @escaping @Sendable (String) -> Void) {
        let (ids, unsent) = state.withLock { state -> ([String], [BatchJob]) in
            let ids = state.live.keys.filter { !state.cancelled.contains($0) }.sorted()
            state.cancelled.formUnion(ids)
            state.cancelRequests = []
            state.arrivals = [:]
            defer { state.waiting = [] }
            return (ids, state.waiting)
        }
        for job in unsent { queue.async { job.rejected("stopped before it was submitted to Slurm") } }
        guard !ids.isEmpty else { return }
        queue.async { [self] in
            let output = try? cluster.scancel.run(ids)  // a failure is reported below
            note(output?.succeeded == true
                ? "slurm: cancelled \(String(counting: ids.count, "job")) (\(ids.joined(separator: " "))) with one scancel"
                : "slurm: scancel failed: \(output?.message ?? "not run")")
            schedulePass(after: 0)
        }
    }

    /// Waits until the commands handed to the queue so far have run (a `cancelEverything`'s `scancel`).
    /// Blocks: call it from a worker thread.
    func waitForCommands() {
        queue.sync {}
    }

    private func schedulePass(after delay: Double) {
        let due = clock.now + .milliseconds(Int64(delay * 1000))
        let schedule = state.withLock { state -> Bool in
            if delay == 0 {
                // Something happened (a job to submit or cancel): the next poll comes at the shortest interval.
                state.interval = Self.shortestInterval
                let soon = clock.now + .milliseconds(Int64(shortestPollInterval * 1000))
                if let poll = state.nextPoll, poll > soon { state.nextPoll = soon }
            }
            // A pass due sooner than the one scheduled goes ahead of it; an extra pass does no harm.
            if let next = state.nextPass, next <= due { return false }
            state.nextPass = due
            return true
        }
        if schedule { queue.asyncAfter(deadline: .now() + delay) { [self] in pass() } }
    }

    /// One pass: cancel, submit, poll, forward output, end what ended; then schedule the next.
    private func pass() {
        state.withLock { state in
            if let next = state.nextPass, next <= clock.now + .milliseconds(5) { state.nextPass = nil }
        }
        let cancels = state.withLock { state -> [String] in
            let ids = state.cancelRequests.sorted()
            state.cancelled.formUnion(ids)
            state.cancelRequests = []
            return ids
        }
        if !cancels.isEmpty { _ = try? cluster.scancel.run(cancels) }  // a job already ended needs no cancel
        // A timed-out job ends with its `scancel`, as a local one ends with its SIGKILL, not a poll or two
        // later: Slurm kills what is left of it on the node.
        let timedOut = state.withLock { state -> [BatchJob] in
            let jobs = cancels.compactMap { id in state.live[id].flatMap { $0.state.withLock(\.timedOut) ? $0 : nil } }
            for id in cancels where jobs.contains(where: { $0 === state.live[id] }) { state.live.removeValue(forKey: id) }
            return jobs
        }
        for job in timedOut { endJob(job, slurmState: "CANCELLED", reason: nil, timedOut: true) }
        var changed = !cancels.isEmpty
        changed = submitWaiting() || changed
        let pollDue = state.withLock { state in state.nextPoll.map { $0 <= clock.now + .milliseconds(5) } ?? true }
        if pollDue { changed = poll() || changed }

        let (busy, waitForRate) = state.withLock { state -> (Bool, Double?) in
            let waitForRate = state.nextSubmission.map { clock.now < $0 ? ($0 - clock.now).inSeconds : 0 }
            let waitForArray = state.waiting.first?.arrayKey.flatMap { arrayHold($0, in: state) }
            let wait = [waitForRate, waitForArray].compactMap { $0 }.max()
            return (!state.live.isEmpty || !state.waiting.isEmpty, state.waiting.isEmpty ? nil : wait)
        }
        guard busy else {
            state.withLock { $0.nextPoll = nil }
            return
        }
        let untilPoll = state.withLock { state -> Double in
            if pollDue {
                let shortest = shortestPollInterval
                state.interval = changed ? shortest : min(max(state.interval * 1.5, shortest), pollInterval)
                // Jitter: many runs started together (a job array of jobgraphs) do not poll in step.
                let jittered = state.interval * Double.random(in: 0.8...1.2)
                state.nextPoll = clock.now + .milliseconds(Int64(jittered * 1000))
                return jittered
            }
            return max(0, ((state.nextPoll ?? clock.now) - clock.now).inSeconds)
        }
        schedulePass(after: min(untilPoll, waitForRate.map { max($0, 0.01) } ?? untilPoll))
    }

    /// The shortest time between two polls: `sacct` asks the accounting database, which costs the site more.
    private var shortestPollInterval: Double {
        cluster.sacct == nil ? Self.shortestInterval : Self.shortestAccountingInterval
    }

    /// How long the array of `key` still waits for more of its items: `nil` once it may go in.
    private func arrayHold(_ key: String, in state: State) -> Double? {
        guard let arrival = state.arrivals[key] else { return nil }
        let now = clock.now
        let quiet = Self.arrayQuietPeriod - (now - arrival.latest).inSeconds
        let longest = Self.arrayLongestWait - (now - arrival.first).inSeconds
        let hold = min(quiet, longest)
        return hold > 0 ? hold : nil
    }

    /// Submits waiting jobs while the queue size and rate allow. - Returns: whether any went in.
    private func submitWaiting() -> Bool {
        var submittedAny = false
        while true {
            let group = state.withLock { state -> [BatchJob] in
                guard !state.waiting.isEmpty, state.live.count < queueSize else { return [] }
                if let next = state.nextSubmission, clock.now < next { return [] }
                if let key = state.waiting[0].arrayKey {
                    if arrayHold(key, in: state) != nil { return [] }
                    state.arrivals[key] = nil
                }
                let room = queueSize - state.live.count
                // The first waiting job, with every other waiting item of its fan-out (not only those next
                // to it: another task's job queued between two items must not split the array).
                var members = [0]
                if let key = state.waiting[0].arrayKey {
                    for index in state.waiting.indices.dropFirst() where members.count < room && state.waiting[index].arrayKey == key {
                        members.append(index)
                    }
                }
                let group = members.map { state.waiting[$0] }
                for index in members.reversed() { state.waiting.remove(at: index) }
                if let submitRate { state.nextSubmission = clock.now + .milliseconds(Int64(1000 / submitRate)) }
                return group
            }
            guard !group.isEmpty else { return submittedAny }
            submittedAny = true
            submit(group)
        }
    }

    private func submit(_ group: [BatchJob]) {
        let first = group[0]
        var arguments = ["--parsable", "--export=ALL", "--open-mode=append", "--chdir=\(first.work.workingDirectory)"]
            + first.spec.taskArguments(mode: .jobs, niceness: first.work.niceness, timeout: first.work.timeout)
        let script: String
        if group.count == 1 {
            arguments += ["--job-name=\(jobName)", "--comment=\(first.work.id.rawValue)", "--output=\(first.slurmOutput)"]
            script = first.scriptFile
        } else {
            let number = state.withLock { state -> Int in
                state.arrays += 1
                return state.arrays
            }
            let name = String(first.work.id.rawValue.prefix { $0 != "[" })
            script = "\(directory)/\(SlurmExecutor.fileName(TaskID(name))).array\(number).\(runToken).sh"
            var text = "#!/bin/sh\n# jobgraph: \(group.count) items of \(name) as one job array\ncase \"$SLURM_ARRAY_TASK_ID\" in\n"
            for (index, job) in group.enumerated() {
                text += "\(index)) exec /bin/sh \(TaskScript.quoted(job.scriptFile)) ;;\n"
            }
            text += "esac\nexit 1\n"
            do {
                try text.write(toFile: script, atomically: false, encoding: .utf8)
            } catch {
                for job in group { job.rejected("cannot write '\(script)': \(error)") }
                return
            }
            arguments += ["--array=0-\(group.count - 1)", "--job-name=\(jobName)", "--comment=\(name)", "--output=\(directory)/\(SlurmExecutor.fileName(TaskID(name))).array\(number).\(runToken)_%a.slurm.out"]
        }
        // Written down before the submission too: a run killed before it wrote the answer leaves the next one
        // the job's name and comment to find it by (`SlurmExecutor.takeOver`), so it is never submitted twice.
        let intents = group.enumerated().map { index, job in
            SubmittedJob(runToken: runToken, job: SubmittedJob.intendedID(index: index, of: group.count, statusFile: job.statusFile),
                         task: job.work.id, attempt: job.work.attempt, statusFile: job.statusFile, definition: job.definition)
        }
        do { try ledger?.submitting(intents) } catch { recordingFailed("cannot record a Slurm job of '\(first.work.id.rawValue)' in .jobgraph/state.db: \(error)") }
        let output: SlurmCommand.Output
        do {
            output = try cluster.sbatch.run(arguments + [script], environment: first.work.environment, niceness: first.work.niceness)
        } catch {
            withdraw(intents)
            for job in group { job.rejected("cannot run sbatch: \(error)") }
            return
        }
        let id = output.standardOutput.split(separator: "\n").first.map { String($0.prefix { $0 != ";" }) } ?? ""
        guard output.succeeded, !id.isEmpty, id.allSatisfy(\.isNumber) else {
            // Rejected at submission: the task fails with Slurm's own words.
            withdraw(intents)
            let message = "Slurm rejected the job: \(output.message)"
            for job in group { job.rejected(message) }
            return
        }
        // Written down before the next submission: a run that dies now leaves its jobs to the next (`SlurmExecutor.takeOver`).
        let records = group.enumerated().map { index, job in
            SubmittedJob(runToken: runToken, job: group.count == 1 ? id : "\(id)_\(index)", task: job.work.id, attempt: job.work.attempt,
                         statusFile: job.statusFile, definition: job.definition)
        }
        do { try ledger?.submitted(records) } catch { recordingFailed("cannot record Slurm job \(id) in .jobgraph/state.db: \(error)") }
        state.withLock { state in
            for (index, job) in group.enumerated() {
                let jobID = group.count == 1 ? id : "\(id)_\(index)"
                job.state.withLock { $0.slurmID = jobID }
                state.live[jobID] = job
                // A job whose stop was asked while it was being submitted is cancelled now.
                if job.state.withLock({ $0.stopRequested }) { state.cancelRequests.insert(jobID) }
            }
        }
    }

    /// Marks jobs written down before a submission that Slurm refused as ended, so that no later run looks
    /// for them (`SlurmExecutor.takeOver`).
    private func withdraw(_ intents: [SubmittedJob]) {
        for var intent in intents {
            intent.outcome = .failed
            try? ledger?.ended(intent)  // a row left: the next run finds no such job, and runs the task
        }
    }

    /// One `sacct` (where accounting works) or one `squeue` for every live job; ends those Slurm has ended.
    /// A job `sacct` does not list yet (the controller tells the database a moment later) is asked of `squeue`.
    /// - Returns: whether any ended.
    private func poll() -> Bool {
        let live = state.withLock { $0.live }
        guard !live.isEmpty else { return false }
        var seen = accountedStates(of: Set(live.keys)) ?? [:]
        let unaccounted = live.keys.filter { seen[$0] == nil }
        if !unaccounted.isEmpty {
            guard let queued = queuedStates(of: unaccounted) else { return false }  // the controller is busy: next pass
            seen.merge(queued) { accounted, _ in accounted }
        }
        var ended: [(BatchJob, String?, String?)] = []
        var pending: [String: Int] = [:]
        for (id, job) in live {
            if let status = seen[id], status.state == "PENDING" { pending[SlurmCluster.pendingReason(status.reason), default: 0] += 1 }
            if let status = seen[id], Self.liveStates.contains(status.state) {
                if status.state == "RUNNING" { armTimeout(job) }
                job.forwardOutput(final: false)
                continue
            }
            ended.append((job, seen[id]?.state, seen[id]?.reason))
            _ = state.withLock { $0.live.removeValue(forKey: id) }
        }
        sayWaiting(pending: pending, live: live.count - ended.count)
        for (job, slurmState, reason) in ended { endJob(job, slurmState: slurmState, reason: reason, timedOut: false) }
        return !ended.isEmpty
    }

    /// The states of the run's jobs in one `sacct` by the run's job name; `nil` without accounting or when
    /// it did not answer. A pending array whose items are not split yet (`12_[0-3]`) counts for each of `ids`
    /// of that array.
    private func accountedStates(of ids: Set<String>) -> [String: (state: String, reason: String)]? {
        guard let sacct = cluster.sacct else { return nil }
        let start = Self.sacctTime.string(from: since.addingTimeInterval(-60))
        let names = ([jobName] + state.withLock(\.adoptedNames)).joined(separator: ",")
        guard let output = try? sacct.run(["--noheader", "--allocations", "--parsable2", "--name=\(names)", "--starttime=\(start)",
                                           "--format=JobID,State,Reason"]),  // not started: squeue instead
              output.succeeded else { return nil }
        var states: [String: (state: String, reason: String)] = [:]
        for line in output.standardOutput.split(separator: "\n") {
            let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 3 else { continue }
            // `CANCELLED by 0`: the state is the first word.
            let status = (state: String(fields[1].prefix { $0 != " " }), reason: fields[2])
            if let bracket = fields[0].firstIndex(of: "[") {
                let base = fields[0][..<bracket]
                for id in ids where id.hasPrefix(base) && states[id] == nil { states[id] = status }
            } else {
                states[fields[0]] = status
            }
        }
        return states
    }

    /// `sacct`'s `--starttime` format, in the local time zone as sacct reads it.
    private static let sacctTime: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        return formatter
    }()

    /// The states of `ids` in one `squeue`; `nil` when the controller did not answer.
    private func queuedStates(of ids: [String]) -> [String: (state: String, reason: String)]? {
        let bases = Set(ids.map { String($0.prefix { $0 != "_" }) }).sorted()
        var output = try? cluster.squeue.run(["--noheader", "--array", "--states=all", "--format=%i|%T|%r", "--jobs=\(bases.joined(separator: ","))"])
        if output?.succeeded != true {
            // A job Slurm has already forgotten makes `--jobs` fail: ask for all of this user's jobs instead.
            output = try? cluster.squeue.run(["--noheader", "--array", "--states=all", "--format=%i|%T|%r", "--user=\(getuid())"])
        }
        guard let output, output.succeeded else { return nil }
        var seen: [String: (state: String, reason: String)] = [:]
        for line in output.standardOutput.split(separator: "\n") {
            let fields = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard fields.count == 3 else { continue }
            seen[fields[0]] = (fields[1], fields[2])
        }
        return seen
    }

    /// Ends a job that Slurm has ended, its failure's cause set first from Slurm's state.
    private func endJob(_ job: BatchJob, slurmState: String?, reason: String?, timedOut: Bool) {
        let cause = timedOut ? .timeout : slurmState.flatMap(Self.cause(ofState:))
        state.withLock { $0.causes[ObjectIdentifier(job)] }?.withLock { $0 = cause }
        job.finish(slurmState: slurmState, reason: reason)
    }

    /// The `retry_on` cause of a job Slurm ended in `state` (`squeue`'s `%T`), if it names one.
    static func cause(ofState state: String) -> FailureCause? {
        switch state {
        case "OUT_OF_MEMORY": .oom
        case "TIMEOUT", "DEADLINE": .timeout
        case "NODE_FAIL": .nodeFail
        case "PREEMPTED": .preempted
        default: nil
        }
    }

    /// Starts jobgraph's own timeout of a job once it runs, counted from when its script began (the status
    /// file's first line), as a local task's is counted from its start, not from its submission.
    private func armTimeout(_ job: BatchJob) {
        guard let timeout = job.work.timeout else { return }
        let start = (try? FileManager.default.attributesOfItem(atPath: job.statusFile))?[.modificationDate] as? Date
        guard let start else { return }  // not begun yet (a job runs briefly before its script): next poll
        let timer = DispatchWorkItem { [weak job, weak self] in
            guard let job, let self else { return }
            job.state.withLock { $0.timedOut = true }
            self.cancel(job)
        }
        let armed = job.state.withLock { state -> Bool in
            guard state.timer == nil, !state.isDone else { return false }
            state.timer = timer
            return true
        }
        if armed { DispatchQueue.global().asyncAfter(deadline: .now() + max(0, timeout + start.timeIntervalSinceNow), execute: timer) }
    }

    /// States in which a job has not ended (its script may still write).
    static let liveStates: Set<String> = [
        "PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESIZING",
        "SIGNALING", "STAGE_OUT", "STOPPED", "RESV_DEL_HOLD",
    ]
}

/// The handle of an attempt that failed before it reached Slurm.
private struct FailedStart: TaskExecution {
    func terminate(grace: Double) {}
    func kill() {}
    func pause() {}
    func resume() {}
}
