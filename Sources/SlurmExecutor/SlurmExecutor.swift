import Foundation
import JobGraphBasics
import JobGraphSystem
import Execution
import PipelineModel
import TaskGraph

/// Runs tasks' commands on a Slurm cluster, while jobgraph keeps the graph, the rules and the events.
///
/// `allocation` mode obtains one allocation for the run (`salloc --no-shell`, sized from `--jobs`) and
/// starts one long-lived worker step per slot in it (`StepWorker`), which runs the attempts it is handed
/// without an `srun` each. A run with a `parallel` task or `srun_args` runs each attempt as a job step of
/// its own instead, `srun --jobid=… --exact -n1`, through the local executor: the local `srun` process
/// carries the step's output back live, and jobgraph's own timeouts and signals stop it. The Plan starts
/// a task only when one of its `--jobs` slots is free, and the allocation has a slot's CPUs for each, so
/// a step never queues inside the allocation waiting for the controller's next pass.
/// `jobs` mode submits one batch job per attempt (`BatchJobQueue`).
///
/// What is not a cluster command stays here: built-in downloads and filters, conditions and hooks
/// (checked where jobgraph runs) and services (their address must be known to the tasks that need them).
///
/// The Runner drives the run's life on the cluster (`TaskExecutor`): `prepare()` obtains the allocation,
/// `cancel()` stops the batch jobs after Ctrl-C or SIGTERM, and `finish()` releases what is left.
public final class SlurmExecutor: TaskExecutor {
    let cluster: SlurmCluster
    let graph: TaskGraph
    let mode: SlurmMode
    private let jobs: Int
    private let local: any TaskExecutor
    /// `.jobgraph/slurm`: status files and batch scripts.
    let workDirectory: String
    /// The tasks whose work goes to the cluster, by id, with their Slurm settings: looked up once per start.
    private let clusterTasks: [String: (task: TaskSpec, slurm: SlurmSpec)]
    let allocation = Locked<String?>(nil)
    let cancelled = Locked(false)
    let notes = Locked<[String]>([])
    let batch: BatchJobQueue?
    private let environment: [String: String]
    /// Allocation mode: the long-lived steps that run plain tasks (`StepWorker`).
    private let workers = Locked<[StepWorker]>([])
    /// Ctrl-C or SIGTERM came: the summary says the allocation was cancelled, not released.
    let interrupted = Locked(false)
    /// How Slurm ended the allocation during the run (`TIMEOUT`), once an attempt found it ended: there is
    /// nothing left to release then.
    let allocationEnd = Locked<String?>(nil)
    private let plan: SlurmPlanDescription
    /// Names this run's attempt files (`TASK.ATTEMPT.RUN.status`), so that a job of an earlier run still
    /// running (jobgraph was killed) never writes into this run's: its outcome cannot become this run's verdict.
    let runToken = String(UInt64.random(in: 1...UInt64.max), radix: 36)
    /// The `--job-name` of the run's allocation: the run's own, so that its jobs can be told from others'.
    private var jobName: String { "jobgraph-" + runToken }
    /// Allocation mode: the `salloc` pending now, which a Ctrl-C or SIGTERM stops.
    private let allocationRequest = Locked<AllocationRequest?>(nil)
    /// Where the executor says what the run waits for (`reportWaiting(to:)`).
    private let waiting = Locked<(@Sendable (String?) -> Void)?>(nil)
    /// Where it says at once what it did that changes what runs (`reportLines(to:)`); `nil`: in the summary.
    private let saying = Locked<(@Sendable ([String]) -> Void)?>(nil)
    /// Where the run writes down its jobs, and finds those of a killed run (`state.db`); `nil` for none.
    let ledger: (any JobLedger)?
    /// Takes over a killed run's jobs (`true`), or cancels them (`--no-reattach`) before it starts.
    let reattaches: Bool
    /// A nested run (docs/cli.md, "Nested runs") writes its jobs down like any run, but leaves the killed
    /// runs' jobs to the run it is nested in, whose own jobs are not a killed run's.
    let isNested: Bool
    /// Jobs of killed runs this run takes over, by task, until the task starts (`takeOver`); `isLive`: Slurm
    /// still ran it (or had it pending) then.
    let adoptions = Locked<[TaskID: (job: SubmittedJob, isLive: Bool)]>([:])
    /// The killed runs whose jobs this run took over: released with its own once it ends.
    let adoptedRuns = Locked<[String]>([])

    /// The tasks of `graph` that cannot go to a cluster because they use jobgraph's terminal (`interactive`,
    /// `prompt`): an error at each, for exit status 2 before anything runs (docs/pipeline.md, "Interactive tasks").
    public static func terminalTaskDiagnostics(in graph: TaskGraph) -> Diagnostics {
        var diagnostics = Diagnostics()
        var seen: Set<String> = []
        for node in graph.nodes where node.spec.runsAlone && seen.insert(node.spec.id.rawValue).inserted {
            let key = node.spec.isInteractive ? "interactive" : "prompt"
            diagnostics.error("task '\(node.spec.id.rawValue)' is '\(key)', which needs jobgraph's terminal; it cannot run on "
                              + "the Slurm executor: run it with '--executor local'", at: node.spec.location)
        }
        return diagnostics
    }

    /// The executor for a run of `graph`, after checking that the cluster can take it: its client
    /// programs are found on the configuration's `PATH`, and its controller names its partitions.
    /// - Parameters:
    ///   - local: runs what stays on this machine, and in allocation mode the local `srun` of each step.
    ///   - ledger: where the run writes down its jobs, and finds those of a killed run (`nil`: nowhere).
    ///   - reattaches: take over a killed run's jobs, or (false, `--no-reattach`) cancel them first.
    ///   - isNested: the run is nested in another run of the pipeline: it finds no killed run's jobs.
    /// - Throws: every reason the cluster cannot take the run, before anything runs.
    public static func connect(graph: TaskGraph, mode: SlurmMode, configuration: RunConfiguration,
                               local: any TaskExecutor, ledger: (any JobLedger)? = nil,
                               reattaches: Bool = true, isNested: Bool = false) throws(SlurmSetupError) -> SlurmExecutor {
        let cluster = try SlurmCluster.connect(environment: configuration.environment)
        let problems = cluster.problems(in: graph, mode: mode, jobs: configuration.jobs)
        if !problems.isEmpty { throw SlurmSetupError(problems) }
        return SlurmExecutor(cluster: cluster, graph: graph, mode: mode, jobs: configuration.jobs, local: local,
                             stateDirectory: configuration.stateDirectory, environment: configuration.environment,
                             ledger: ledger, reattaches: reattaches, isNested: isNested)
    }

    /// - Parameters:
    ///   - local: runs what stays on this machine, and in allocation mode the local `srun` of each step.
    ///   - stateDirectory: the run's `.jobgraph` folder (on a file system the nodes share).
    public init(cluster: SlurmCluster, graph: TaskGraph, mode: SlurmMode, jobs: Int, local: any TaskExecutor,
                stateDirectory: String, environment: [String: String], ledger: (any JobLedger)? = nil, reattaches: Bool = true,
                isNested: Bool = false) {
        self.cluster = cluster
        self.ledger = ledger
        self.reattaches = reattaches
        self.isNested = isNested
        self.graph = graph
        self.mode = mode
        self.jobs = jobs
        self.local = local
        // What runs on the cluster is not the session watchdog's to stop (docs/state.md, "A killed run").
        self.environment = environment.filter { $0.key != SessionWatchdog.variable }
        plan = SlurmPlanDescription(mode: mode, jobs: jobs)
        workDirectory = stateDirectory + "/slurm"
        var clusterTasks: [String: (task: TaskSpec, slurm: SlurmSpec)] = [:]
        for task in graph.pipeline.tasks where task.runsOnCluster {
            clusterTasks[task.id.rawValue] = (task, mode == .jobs ? graph.pipeline.slurmJob(for: task) : graph.pipeline.slurm(for: task))
        }
        self.clusterTasks = clusterTasks
        let top = graph.pipeline.slurm ?? SlurmSpec()
        batch = mode == .jobs
            ? BatchJobQueue(cluster: cluster, directory: stateDirectory + "/slurm", runToken: runToken, queueSize: top.queueSize ?? 100,
                            submitRate: top.submitRate, pollInterval: top.pollInterval ?? 5, ledger: ledger)
            : nil
    }

    /// Makes the work folder and, in allocation mode, obtains the allocation (waiting until it is granted)
    /// and starts its worker steps. The Runner calls it on a worker thread, before the first task starts.
    /// - Returns: a line for the user.
    /// - Throws: `SlurmSetupError` when the folder cannot be made or Slurm refuses the allocation.
    public func prepare() throws -> [String] {
        do {
            try FileManager.default.createDirectory(atPath: workDirectory, withIntermediateDirectories: true)
        } catch {
            throw SlurmSetupError(["cannot create '\(workDirectory)': \(error)"])
        }
        let takenOver = takeOver()
        guard mode == .allocation else {
            return takenOver + ["slurm: one batch job per task, at most \(batch?.queueSize ?? 100) queued at once"]
        }
        let cpus = graph.pipeline.slurmCPUsPerSlot
        // A killed run's allocation that is still running, and is what this run would ask for, is reused (`takeOver`).
        let job = try allocation.withLock({ $0 }) ?? requestAllocation()
        do { try ledger?.submitted([SubmittedJob(runToken: runToken, job: job, kind: .allocation, definition: allocationDefinition)]) } catch {
            notes.withLock { $0.append("warning: cannot record Slurm allocation \(job) in .jobgraph/state.db: \(error)") }
        }
        guard graph.pipeline.slurmRunsInWorkerSteps else {
            return takenOver + ["slurm: allocation \(job) (\(jobs) × \(cpus) CPUs); each task runs as a job step in it"]
        }
        let marker = "jobgraph-" + runToken
        var started: [StepWorker] = []
        for index in 0..<jobs {
            do {
                started.append(try StepWorker(index: index, job: job, cpus: cpus, srun: cluster.srun, marker: marker,
                                              directory: workDirectory, local: local, environment: environment))
            } catch {
                break  // the tasks that find no worker get steps of their own
            }
        }
        workers.withLock { $0 = started }
        // Each step's id is written down before a task runs in any of them: a run killed later leaves the
        // next one the steps to end before it reuses the allocation. The steps come up together, so this
        // costs the run's start the slowest step's launch, not one launch per step.
        let steps = started.compactMap { $0.waitForStep(seconds: 60) }
        do {
            try ledger?.submitted(steps.map { SubmittedJob(runToken: runToken, job: $0, kind: .workerStep) })
        } catch {
            notes.withLock { $0.append("warning: cannot record the worker steps of Slurm allocation \(job) in .jobgraph/state.db: \(error)") }
        }
        return takenOver + ["slurm: allocation \(job) (\(jobs) × \(cpus) CPUs); \(started.count) worker steps in it run the tasks"]
    }

    /// What the run's allocation asks for: `salloc`'s arguments but `--no-shell` and the job name.
    private var requestedAllocation: [String] {
        let top = graph.pipeline.slurm ?? SlurmSpec()
        var time = graph.slurmAllocationTime
        if let maximum = (top.partition ?? cluster.defaultPartition).flatMap({ cluster.partitions[$0]?.timeLimit }) {
            time = min(time, maximum)
        }
        return top.allocationArguments(jobs: jobs, cpusPerTask: graph.pipeline.slurmCPUsPerSlot, time: time)
    }

    /// A digest of the allocation the run asks for but its time: a killed run's allocation with the same
    /// is reused (docs/pipeline.md, "Reattach").
    var allocationDefinition: String {
        SHA256.hex(of: requestedAllocation.filter { !$0.hasPrefix("--time=") }.joined(separator: "\n").utf8)
    }

    /// Asks Slurm for the run's allocation and waits until it is granted.
    /// - Returns: its job id.
    /// - Throws: `SlurmSetupError` when Slurm refuses it, or the run is stopped while it pends.
    private func requestAllocation() throws -> String {
        // The job name is the run's own: `squeue` and `sacct` find the run's jobs by it.
        let arguments = ["--no-shell", "--job-name=\(jobName)"] + requestedAllocation
        let request = AllocationRequest(cluster: cluster, arguments: arguments, messageFile: "\(workDirectory)/salloc.\(runToken).out")
        let outcome: AllocationRequest.Outcome
        do {
            let proceed = allocationRequest.withLock { slot -> Bool in
                guard !interrupted.withLock({ $0 }) else { return false }
                slot = request
                return true
            }
            outcome = proceed ? try request.run { [waiting] text in waiting.withLock { $0 }?(text) } : .cancelled
        } catch {
            throw SlurmSetupError(["cannot run salloc: \(error)"])
        }
        allocationRequest.withLock { $0 = nil }
        waiting.withLock { $0 }?(nil)
        switch outcome {
        case .granted(let job):
            allocation.withLock { $0 = job }
            return job
        case .refused(let message):
            throw SlurmSetupError(["Slurm refused the run's allocation (salloc \(arguments.joined(separator: " "))): \(message)"])
        case .cancelled:
            throw SlurmSetupError(["the run was stopped while its Slurm allocation was pending; the request is cancelled"])
        }
    }

    /// `salloc: Granted job allocation 1234` → `1234`.
    static func grantedJob(in text: String) -> String? {
        AllocationRequest.job(after: "Granted job allocation ", in: text)
    }

    public func start(_ work: TaskWork, reporter: TaskReporter) throws -> any TaskExecution {
        let baseID = String(work.id.rawValue.prefix { $0 != "[" })
        guard case .shell(let commands, let concurrently) = work.work, !work.appendsToLog,
              let (task, unscaled) = clusterTasks[baseID]
        else { return try local.start(work, reporter: reporter) }
        // A retry asks for what `retry_scale` gives it; its `timeout` is scaled already (`TaskWork`).
        let spec = unscaled.scaled(by: task.retryScale, attempt: work.attempt)
        // What runs on the cluster is not the session watchdog's to stop (docs/state.md, "A killed run").
        // A batch job and a worker step get the environment as `work` holds it, the attempt's number with it.
        var work = work
        work.environment[SessionWatchdog.variable] = nil
        work.environment[TaskWork.attemptVariable] = String(work.attempt)
        // The CPUs its job or step asks for: `resources` or `slurm:`, scaled for a retry.
        work.environment[TaskWork.cpusVariable] = String(spec.cpus ?? work.cpus)
        work.sharedEnvironment = nil
        let statusFile = "\(workDirectory)/\(Self.fileName(work.id)).\(work.attempt).\(runToken).status"
        if let batch {
            let definition = Self.definition(of: work, commands: commands, concurrently: concurrently, spec: spec)
            if case let (adopted, isLive)? = adoptions.withLock({ $0.removeValue(forKey: work.id) }), let adoptedStatus = adopted.statusFile {
                // A job of a killed run whose task has been edited since runs the old commands: the task runs anew.
                // (A job written down by an older jobgraph has no digest, and is taken over as it is.)
                if adopted.definition == nil || adopted.definition == definition {
                    return batch.adopt(adopted, statusFile: adoptedStatus, work: work, commands: commands, spec: spec, reporter: reporter)
                }
                if isLive { batch.cancel(ids: [adopted.job]) }
                let line = "slurm: task '\(work.id.rawValue)' was edited after the killed run submitted job \(adopted.job) for it: "
                    + (isLive ? "cancelled the job, and runs anew" : "runs anew rather than count how that job ended")
                if let say = saying.withLock({ $0 }) { say([line]) } else { notes.withLock { $0.append(line) } }
            }
            return batch.submit(work: work, commands: commands, concurrently: concurrently, spec: spec, statusFile: statusFile,
                                arrayKey: Self.arrayKey(task, work: work), definition: definition, reporter: reporter)
        }
        return try startStep(work, commands: commands, concurrently: concurrently, spec: spec, statusFile: statusFile, reporter: reporter)
    }

    /// What an attempt's batch job runs, as a digest: its commands, their folder and its Slurm request. A
    /// killed run's job is taken over only by an attempt with the same (docs/pipeline.md, "Reattach").
    static func definition(of work: TaskWork, commands: [String], concurrently: Bool, spec: SlurmSpec) -> String {
        let request = spec.taskArguments(mode: .jobs, niceness: work.niceness, timeout: work.timeout)
        let parts = [concurrently ? "parallel" : "run", work.workingDirectory] + request + ["--"] + commands
        return SHA256.hex(of: parts.joined(separator: "\u{0}").utf8)
    }

    /// A job step in the allocation, run by a local `srun`.
    private func startStep(_ work: TaskWork, commands: [String], concurrently: Bool, spec: SlurmSpec, statusFile: String,
                           reporter: TaskReporter) throws -> any TaskExecution {
        if !concurrently {
            // A worker step says only "timed out after …" of jobgraph's own timeout: the cause `retry_on` names is added here.
            var workerReporter = reporter
            workerReporter.finished = { [self] result in finishStep(Self.withTimeoutCause(result), reporter: reporter) }
            for worker in workers.withLock({ $0 }) {
                if let task = worker.run(work, commands: commands, concurrently: false, statusFile: statusFile, reporter: workerReporter) {
                    return task
                }
            }
        }
        guard let job = allocation.withLock({ $0 }), !cancelled.withLock({ $0 }) else {
            throw SlurmSetupError(["the run's Slurm allocation is gone (cancelled)"])
        }
        var options = spec.taskArguments(mode: .allocation, niceness: work.niceness, timeout: work.timeout)
        if concurrently, let limit = work.processLimit {
            options = options.filter { !$0.hasPrefix("--cpus-per-task=") } + ["--cpus-per-task=\(max(limit, spec.cpus ?? 1))"]
        }
        let arguments = [cluster.srun, "--jobid=\(job)", "--exact", "--ntasks=1", "--nodes=1", "--quiet", "--job-name=\(work.id.rawValue)"]
            + options + ["/bin/sh", "-c", TaskScript.program(concurrently: concurrently), "jobgraph-task", statusFile] + commands
        var step = work
        step.work = .shell(commands: ["exec " + arguments.map(TaskScript.quoted).joined(separator: " ")], concurrently: false)
        // The local srun keeps the task's niceness: PropagatePrioProcess gives it to the step's processes.
        step.processLimit = nil
        let slurmError = Locked<String?>(nil)
        var stepReporter = TaskReporter(
            output: { line in
                if line.hasPrefix("srun: error:") || line.hasPrefix("srun: fatal:") { slurmError.withLock { $0 = line } }
                reporter.output(line)
            },
            progress: reporter.progress,
            finished: { result in
                let text = (try? String(contentsOfFile: statusFile, encoding: .utf8)) ?? ""  // no file: the step never began
                unlink(statusFile)
                let recorded = TaskScript.read(text, commands: commands, job: job)
                if let id = recorded.slurmID { reporter.executorJob(id) }
                self.finishStep(Self.outcome(local: result, recorded: recorded.result, slurmError: slurmError.withLock { $0 }), reporter: reporter)
            })
        stepReporter.executorJob = reporter.executorJob
        return try local.start(step, reporter: stepReporter)
    }

    /// How an attempt ended: jobgraph's own timeout first, then what the commands recorded, then what
    /// Slurm said when the step could not run.
    static func outcome(local: TaskResult, recorded: TaskResult?, slurmError: String?) -> TaskResult {
        // srun's status after the teardown is not the command's: a timed-out local task has none either.
        if case .failed(_, let reason, _) = local, reason.hasPrefix("timed out") { return withTimeoutCause(.failed(exitCode: nil, reason: reason)) }
        if let recorded { return recorded }
        guard case .failed(let code, _, _) = local else {
            return .failed(exitCode: nil, reason: "the Slurm step ended without recording how its commands ended")
        }
        if let slurmError { return .failed(exitCode: nil, reason: slurmError) }
        return .failed(exitCode: code, reason: "the Slurm step was stopped")
    }

    /// `result` with the cause `timeout` when it is jobgraph's own timeout (`timed out after 10s`).
    static func withTimeoutCause(_ result: TaskResult) -> TaskResult {
        guard case .failed(let code, let reason, nil) = result, reason.hasPrefix("timed out after") else { return result }
        return .failed(exitCode: code, reason: reason, cause: .timeout)
    }

    /// Ctrl-C, SIGTERM; safe from any thread, and never blocks. Jobs mode: stops every job of the run in
    /// one `scancel`, run on the jobs' own queue. Allocation mode: the Runner stops the executing tasks as
    /// it stops local ones, and the allocation stays until `finish()`, so that `when: always` tasks still
    /// run in it (contract: SIGINT).
    public func cancel() {
        interrupted.withLock { $0 = true }
        // A pending `salloc` ends now (it would hold `prepare()` until the cluster had room).
        allocationRequest.withLock { $0 }?.cancel()
        if batch != nil { cancelEverything(verb: "cancelled") }
    }

    /// Allocation mode says while `salloc` pends, jobs mode while any job pends (`BatchJobQueue`).
    public func reportWaiting(to report: @escaping @Sendable (String?) -> Void) {
        waiting.withLock { $0 = report }
        batch?.reportWaiting(to: report)
    }

    public func reportLines(to report: @escaping @Sendable ([String]) -> Void) {
        saying.withLock { $0 = report }
    }

    /// Releases the allocation, or cancels what is left of the batch jobs, after the run; blocks until
    /// Slurm has answered.
    /// - Returns: lines for the summary: what was cancelled or released, and how.
    public func finish() -> [String] {
        let workers = self.workers.withLock { $0 }
        for worker in workers { worker.close() }
        for worker in workers { worker.waitForEnd(seconds: 5) }
        cancelEverything(verb: interrupted.withLock { $0 } ? "cancelled" : "released")
        batch?.waitForCommands()
        cancelUnclaimedAdoptions()
        if let problem = batch?.ledgerProblem { notes.withLock { $0.append("warning: \(problem)") } }
        // Nothing of this run, or of the killed runs it took over, is left in Slurm for a later run to find.
        do { try ledger?.release([runToken] + adoptedRuns.withLock { $0 }) } catch {
            notes.withLock { $0.append("warning: cannot record the run's end on Slurm in .jobgraph/state.db: \(error)") }
        }
        return notes.withLock { $0 }
    }

    /// Cancels everything of the run, once: in jobs mode on the jobs' queue (this returns at once), in
    /// allocation mode here (only `finish()` gets here then).
    private func cancelEverything(verb: String) {
        let first = cancelled.withLock { value -> Bool in
            defer { value = true }
            return !value
        }
        guard first else { return }
        if let batch {
            batch.cancelEverything { [notes] note in notes.withLock { $0.append(note) } }
        } else if let job = allocation.withLock({ $0 }) {
            if let end = allocationEnd.withLock({ $0 }) {
                notes.withLock { $0.append("slurm: allocation \(job) had ended (\(end)); nothing to release") }
                return
            }
            let output = try? cluster.scancel.run([job])  // a failure is reported below
            let note = output?.succeeded == true
                ? "slurm: \(verb) allocation \(job)\(verb == "cancelled" ? " with all its steps" : "") (one scancel)"
                : "slurm: scancel \(job) failed: \(output?.message ?? "not run")"
            notes.withLock { $0.append(note) }
        }
    }

    // MARK: - TaskDescribing: the dry run shows what `start` would pass

    public var describedColumn: String? { plan.describedColumn }

    public func describeRun(of graph: TaskGraph) -> [String] { plan.describeRun(of: graph) }

    public func describe(node index: Int, of graph: TaskGraph) -> String? { plan.describe(node: index, of: graph) }

    /// The task's name as a file name: `photo[3]` → `photo_3_`.
    static func fileName(_ id: TaskID) -> String {
        String(id.rawValue.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." || $0 == "_" ? $0 : "_" })
    }

    /// Items of a static `foreach` that may share one job array: same task, folder and environment.
    static func arrayKey(_ task: TaskSpec, work: TaskWork) -> String? {
        guard case .items? = task.foreach, work.attempt == 1 else { return nil }
        var hasher = Hasher()
        hasher.combine(work.workingDirectory)
        hasher.combine(work.environment)
        hasher.combine(work.niceness)
        hasher.combine(work.timeout)
        return "\(task.id.rawValue)#\(hasher.finalize())"
    }
}

extension SlurmSetupError: CustomStringConvertible {
    public var description: String { problems.joined(separator: "; ") }
}
