import Glibc
import JobGraphBasics
import Execution
import JobGraphSystem
import PipelineModel

/// One attempt of a `run` or `parallel` task: its commands as child processes, each in its own
/// process group, output to the task's log and to the run's events, whole lines only.
///
/// `run`: one command after another, stopping at the first failure. `parallel`: at once, at most
/// `processLimit` at a time (its share of `--jobs`), the next starting as one succeeds; the first failure
/// terminates the others and starts no more (contract: "Parallel groups").
final class ShellStep: TaskExecution, @unchecked Sendable {
    // `@unchecked`: the mutable state lives in `state`, a `Locked` box; the rest is immutable.
    private struct State {
        /// The first command not started yet.
        var next = 0
        var running: [UInt64: ProcessID] = [:]
        /// Commands claimed to start and not yet in `running`, being spawned or waiting for their timer to try
        /// a busy program again (see `retry`): one that ends meanwhile must not end the attempt. Under load the
        /// spawning thread once lost the processor between a command's start and its entry here; the other
        /// command's end found nothing running, and the attempt ended without the first one's output
        /// (ShellStepTests.parallelCommandsRunAtTheSameTime, loaded ThreadSanitizer pass).
        var starting = 0
        var failure: TaskResult?
        var isStopping = false
        var isDone = false
        var timer: TimerID?
        var timedOut = false

        /// Nothing runs and nothing waits to: the attempt may end.
        var isIdle: Bool { running.isEmpty && starting == 0 }
    }

    /// The pause before the first try again of a busy program, doubled for each next one; once the pauses
    /// add up to about the spawner's `busyPatience`, the shell gets the command and says why it fails.
    private static let firstBusyPause = Duration.milliseconds(1)

    private let work: TaskWork
    private let commands: [String]
    private let concurrently: Bool
    private let log: TaskLog
    private let reporter: TaskReporter
    private let loop: EventLoop
    private let spawner: ProcessSpawner
    private let makeToken: @Sendable () -> ChildToken
    /// Tells a SIGKILL that jobgraph did not send from an OOM kill; `nil` where the kernel's count cannot be read.
    private let oomKills: OOMKillCounter?
    /// The environment after `sharedEnvironment`'s entries, ending with the task's mark.
    private let environment: [String]
    private let sharedEnvironment: EnvironmentBlock?
    /// For an interactive task, what its commands get of the terminal; `.none` for the others.
    private let terminal: ProcessSpawner.TerminalAccess
    private let state = Locked(State())

    init(work: TaskWork, commands: [String], concurrently: Bool, log: TaskLog, reporter: TaskReporter, loop: EventLoop,
         spawner: ProcessSpawner, oomKills: OOMKillCounter? = nil, makeToken: @escaping @Sendable () -> ChildToken) {
        self.oomKills = oomKills
        self.work = work
        self.commands = commands
        self.concurrently = concurrently
        self.log = log
        self.reporter = reporter
        self.loop = loop
        self.spawner = spawner
        self.makeToken = makeToken
        // The task's mark, by which `DescendantSweep` names the task a process that escaped its group came from.
        let mark = DescendantSweep.taskVariable + "=" + work.id.rawValue
        // The attempt's number, set here as the mark is: in `environment` it would cost every task its own copy.
        let attempt = TaskWork.attemptVariable + "=" + String(work.attempt)
        let cpus = TaskWork.cpusVariable + "=" + String(work.cpus)
        sharedEnvironment = work.sharedEnvironment
        environment = work.sharedEnvironment != nil ? [mark, attempt, cpus]
            : EnvironmentBlock.entries(of: work.environment, excluding: DescendantSweep.taskVariable)
                .filter { !$0.hasPrefix(TaskWork.attemptVariable + "=") && !$0.hasPrefix(TaskWork.cpusVariable + "=") } + [mark, attempt, cpus]
        terminal = work.isInteractive ? .inherited(foreground: TerminalForeground.descriptor()) : .none
    }

    func begin() {
        if work.isInteractive {
            log.write(line: Array("(interactive task: its output went to the terminal, not to this log)".utf8))
        }
        if let timeout = work.timeout {
            let timer = loop.schedule(after: .milliseconds(Int64(timeout * 1000))) { [weak self] in self?.timeOut() }
            state.withLock { $0.timer = timer }
        }
        if commands.isEmpty {
            finish(.succeeded)
            return
        }
        // Claimed under the lock before spawning: a command that ends at once must not start the same one.
        let limit = concurrently ? max(1, work.processLimit ?? commands.count) : 1
        let first = state.withLock { state -> Range<Int> in
            state.next = min(limit, commands.count)
            state.starting = state.next
            return 0..<state.next
        }
        for index in first { spawn(index) }
    }

    private func spawn(_ index: Int, busyPause: Duration = ShellStep.firstBusyPause) {
        let child: ChildProcess
        // The pauses so far add up to `busyPause` less the first one.
        let isLastTry = busyPause >= spawner.busyPatience
        do {
            child = try spawner.spawn(command: commands[index], environment: environment, sharedEnvironment: sharedEnvironment,
                                      workingDirectory: work.workingDirectory, niceness: work.niceness,
                                      whenBusy: isLastTry ? .runShell : .report, terminal: terminal)
        } catch where error.errno == .textFileBusy && !isLastTry {
            retry(index, after: busyPause)
            return
        } catch {
            state.withLock { $0.starting -= 1 }
            fail(.failed(exitCode: nil, reason: "cannot start `\(commands[index])`: \(error)"))
            return
        }
        let token = makeToken()
        let stopNow = state.withLock { state -> Bool in
            state.running[token.rawValue] = child.id
            state.starting -= 1
            return state.isStopping
        }
        let handler = ChildCallbacks(
            // Strong on purpose: a running step keeps itself alive until its last child has ended, even
            // when its caller (a hook, a condition) keeps no handle; the loop drops these closures then.
            printed: { _, line in self.printed(line) },
            finished: { token, result in self.exited(token, command: index, result) })
        loop.watch(child, token: token, handler: handler)
        if stopNow { loop.tearDown(child.id, using: .kill) }
    }

    /// Tries command `index` again once `pause` has passed, from a timer on the loop: its program was busy
    /// (see `ProcessSpawner.BusyProgram`). Sleeping instead held up the spawning thread, often the loop's.
    private func retry(_ index: Int, after pause: Duration) {
        loop.schedule(after: pause) { [self] in
            enum Next { case spawn, wait, finish(TaskResult) }
            let next = state.withLock { state -> Next in
                guard state.isStopping else { return .spawn }
                state.starting -= 1
                // Stopped meanwhile (a failure beside it, a timeout, the run): the command never ran.
                if state.failure == nil {
                    state.failure = state.timedOut ? timedOut
                        : .failed(exitCode: nil, reason: "stopped before `\(abbreviated(commands[index]))` ran")
                }
                return state.isIdle ? .finish(state.failure ?? .succeeded) : .wait
            }
            switch next {
            case .spawn: spawn(index, busyPause: pause * 2)
            case .wait: break
            case .finish(let result): finish(result)
            }
        }
    }

    private var timedOut: TaskResult {
        .failed(exitCode: nil, reason: "timed out after \(DurationText.text(forSeconds: work.timeout ?? 0))", cause: .timeout)
    }

    /// Why a command that was not stopped by jobgraph ended with `status` (a stopped one's cause is why
    /// it was stopped): a signal, or an OOM kill when SIGKILL came as the kernel counted one.
    private func cause(of status: TerminationStatus, isStopping: Bool) -> FailureCause? {
        guard case .signalled(let signal, _) = status, !isStopping else { return nil }
        return signal == SIGKILL && oomKills?.claimKill() == true ? .oom : .signal
    }

    private func printed(_ line: [UInt8]) {
        log.write(line: line)
        reporter.output(String(decoding: line, as: UTF8.self))
    }

    private func exited(_ token: ChildToken, command index: Int, _ result: Result<TerminationStatus, SystemError>) {
        if case .inherited(let foreground?) = terminal {
            TerminalForeground.reclaim(foreground)
            // Ctrl-C reached only the command, which had the foreground: it stops the run as it would
            // have had jobgraph been in the foreground, before this attempt ends (docs/pipeline.md, "Interactive tasks").
            if case .success(.signalled(let signal, _)) = result, signal == SIGINT { reporter.interruptsRun() }
        }
        enum Next { case spawn(Int), finish(TaskResult), wait, stopOthers }
        let (next, group) = state.withLock { state -> (Next, ProcessID?) in
            let group = state.running.removeValue(forKey: token.rawValue)
            switch result {
            case .success(let status) where status.isSuccess:
                break
            case .success(let status):
                if state.failure == nil, state.timedOut {
                    state.failure = timedOut
                } else if state.failure == nil {
                    let exitCode: Int32? = if case .exited(let code) = status { code } else { nil }
                    let cause = cause(of: status, isStopping: state.isStopping)
                    let reason = "`\(abbreviated(commands[index]))` \(ended(status))" + (cause == .oom ? " (out of memory)" : "")
                    state.failure = .failed(exitCode: exitCode, reason: reason, cause: cause)
                }
            case .failure(let error):
                if state.failure == nil { state.failure = .failed(exitCode: nil, reason: "lost track of the process: \(error)") }
            }
            if state.failure != nil && !state.isStopping && !state.isIdle {
                // A parallel group fails as a whole: terminate the rest. Commands that succeed leave the
                // others running: the group is done when all are done.
                state.isStopping = true
                return (.stopOthers, group)
            }
            if state.failure == nil, !state.isStopping, state.next < commands.count, concurrently || state.running.isEmpty {
                // The next command of a list, or a parallel group's next one in the slot just freed.
                state.next += 1
                state.starting += 1
                return (.spawn(state.next - 1), group)
            }
            if !state.isIdle { return (.wait, group) }
            if state.failure == nil, state.timedOut {
                // A command that exits 0 on SIGTERM still ran out of time.
                state.failure = timedOut
            }
            if state.failure == nil, state.next < commands.count {
                // Stopped between commands, or the stopped command exited 0: the commands did not all run.
                state.failure = .failed(exitCode: nil, reason: "stopped before `\(abbreviated(commands[state.next]))` ran")
            }
            return (.finish(state.failure ?? .succeeded), group)
        }
        // Whatever the command left behind in its process group (a backgrounded `server &`) ends with it, so
        // no process outlives its task, let alone jobgraph (contract: "Exit codes and signals").
        _ = try? group?.signalGroup(.kill)  // an empty group (the usual case) is no error worth reporting
        switch next {
        case .spawn(let index): spawn(index)
        case .finish(let result): finish(result)
        case .wait: break
        case .stopOthers: stopRunning(using: .terminate(grace: .seconds(5)))
        }
    }

    /// Records a failure to start; ends the attempt once nothing runs.
    private func fail(_ result: TaskResult) {
        let done = state.withLock { state -> Bool in
            if state.failure == nil { state.failure = result }
            state.isStopping = true
            return state.isIdle
        }
        if done { finish(result) } else { stopRunning(using: .terminate(grace: .seconds(5))) }
    }

    private func finish(_ result: TaskResult) {
        let first = state.withLock { state -> Bool in
            defer { state.isDone = true }
            if let timer = state.timer { loop.cancel(timer) }
            return !state.isDone
        }
        guard first else { return }
        log.close()
        reporter.finished(result)
    }

    private func timeOut() {
        state.withLock { state in
            state.timedOut = true
            state.isStopping = true
        }
        stopRunning(using: .terminate(grace: .seconds(5)))
    }

    private func stopRunning(using teardown: Teardown) {
        let groups = state.withLock { state in
            state.isStopping = true
            return Array(state.running.values)
        }
        for group in groups { loop.tearDown(group, using: teardown) }
    }

    // MARK: - TaskExecution

    func terminate(grace: Double) {
        stopRunning(using: .terminate(grace: .milliseconds(Int64(grace * 1000))))
    }

    func kill() {
        stopRunning(using: .kill)
    }

    func pause() {
        signalRunning(.terminalStop)
    }

    func resume() {
        signalRunning(.continue)
    }

    private func signalRunning(_ signal: ProcessSignal) {
        let groups = state.withLock { Array($0.running.values) }
        for group in groups { _ = try? group.signalGroup(signal) }  // a group that just ended needs no signal
    }
}

/// `exited with code 3`, `was killed by SIGTERM`.
func ended(_ status: TerminationStatus) -> String {
    switch status {
    case .exited(let code): "exited with code \(code)"
    case .signalled: "was \(status)"
    }
}

/// The command as a user recognises it in one line.
func abbreviated(_ command: String) -> String {
    let firstLine = command.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? command
    return firstLine.count > 60 ? String(firstLine.prefix(57)) + "..." : firstLine
}

