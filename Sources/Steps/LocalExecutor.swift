import JobGraphBasics
import Execution
import JobGraphSystem
import Synchronization

/// Runs tasks on this machine: shell commands as child processes watched by one `EventLoop`, image filters
/// on dispatch's global queues.
///
/// No thread per task: spawning happens on the caller's thread (`posix_spawn`, a few tens of
/// microseconds), and every child's output and exit arrive on the loop's one thread.
public final class LocalExecutor: TaskExecutor {
    private let loop: EventLoop
    private let spawner: ProcessSpawner
    private let nextToken = Atomic<UInt64>(1)
    private let logDirectory: LogDirectory
    private let handoff: TerminalHandoff?
    private let oomKills: OOMKillCounter?
    private let beforeStart: (@Sendable () -> Void)?

    /// - Parameters:
    ///   - loop: watches the children; it must outlive every task started here.
    ///   - logDirectory: where `<task>.log` files go; created when the first log is opened.
    ///   - failures: where a log that cannot be written is reported, once per file.
    ///   - handoff: what a task that uses the terminal waits for before it writes there: the live board stepping aside.
    ///   - oomKills: the kernel's count of OOM kills, which makes a task's unexplained SIGKILL an `oom` failure.
    ///   - beforeStart: called as each task starts, before its first process (the session's watchdog starts then).
    public init(loop: EventLoop, logDirectory: String, spawner: ProcessSpawner = ProcessSpawner(), failures: WriteFailures? = nil,
                handoff: TerminalHandoff? = nil, oomKills: OOMKillCounter? = .located(), beforeStart: (@Sendable () -> Void)? = nil) {
        self.handoff = handoff
        self.oomKills = oomKills
        self.beforeStart = beforeStart
        self.loop = loop
        var spawner = spawner
        // Every child goes to the loop, which closes the held end at the child's exit.
        spawner.holdsOutputOpen = true
        self.spawner = spawner
        self.logDirectory = LogDirectory(path: logDirectory, failures: failures)
    }

    public func start(_ work: TaskWork, reporter: TaskReporter) throws -> any TaskExecution {
        beforeStart?()
        // A task that uses the terminal waits for the board to step aside, then for its answer, on a thread.
        if work.prompt != nil || work.isInteractive && handoff != nil {
            // Truncated now: a task that fails at its prompt writes no line, and an earlier run's log must
            // not stand in for this run's in the summary.
            if work.attempt == 1 && !work.appendsToLog { try openLog(for: work).close() }
            var agreed = work
            agreed.prompt = nil
            return try TerminalStep.start(question: work.prompt, taskID: work.id, handoff: handoff, reporter: reporter) { [self] in
                try startWork(agreed, reporter: reporter)
            }
        }
        return try startWork(work, reporter: reporter)
    }

    /// Starts the work itself, once the terminal is the task's when it uses it.
    private func startWork(_ work: TaskWork, reporter: TaskReporter) throws -> any TaskExecution {
        switch work.work {
        case .shell(let commands, let concurrently):
            let log = try openLog(for: work)
            let step = ShellStep(work: work, commands: commands, concurrently: concurrently, log: log, reporter: reporter,
                                 loop: loop, spawner: spawner, oomKills: oomKills) { [self] in
                ChildToken(rawValue: self.nextToken.wrappingAdd(1, ordering: .relaxed).oldValue)
            }
            step.begin()
            return step
        case .download(let url, let destination, let sha256, let maxBytes):
            return DownloadStep.start(url: url, destination: destination, sha256: sha256, maxBytes: maxBytes,
                                      timeout: work.timeout, reporter: reporter, loop: loop)
        case .filter(let filter):
            let log = try openLog(for: work)
            let step = FilterStep(work: work, filter: filter, log: log, reporter: reporter)
            step.begin()
            return step
        }
    }

    /// The task's log: truncated for a first attempt, appended to (under a header) for a retry, and
    /// appended to as is for a command run on the task's behalf.
    private func openLog(for work: TaskWork) throws -> TaskLog {
        let log = try logDirectory.open(work.logPath, task: work.id, appending: work.attempt > 1 || work.appendsToLog)
        if work.attempt > 1 && !work.appendsToLog { log.write(line: Array("--- attempt \(work.attempt) ---".utf8)) }
        return log
    }
}

/// A step that could not run, in a sentence for the user.
public struct StepError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
