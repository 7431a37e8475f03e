import Execution
import Glibc
import JobGraphBasics
import JobGraphSystem
import PipelineModel

/// The start of a task that uses the terminal (docs/pipeline.md, "Interactive tasks"): once the live
/// board has stepped aside (`TerminalHandoff`), it asks the task's `prompt:` if it has one, and starts the
/// task's work; `y` or `yes` starts it, any other answer fails the task.
///
/// The terminal is `/dev/tty`, else standard input when it is a terminal. Waiting and asking block, so
/// they happen on a thread of its own, which waits on the terminal and on a pipe that `terminate` writes
/// to: Ctrl-C at the prompt reaches jobgraph (whose group has the terminal's foreground), which stops the
/// run and so this step. State lives in `state`, a `Locked` box.
final class TerminalStep: TaskExecution, @unchecked Sendable {
    private struct State {
        /// The task's work, once the answer was yes.
        var started: (any TaskExecution)?
        var isStopped = false
    }

    private let question: String?
    private let taskID: TaskID
    private let handoff: TerminalHandoff?
    private let reporter: TaskReporter
    private let startWork: () throws -> any TaskExecution
    private let state = Locked(State())
    /// Written to by `terminate` and `kill`, to wake the asking thread; both ends close-on-exec.
    private let wake: (read: CInt, write: CInt)

    private init(question: String?, taskID: TaskID, handoff: TerminalHandoff?, reporter: TaskReporter, wake: (CInt, CInt),
                 startWork: @escaping () throws -> any TaskExecution) {
        self.question = question
        self.taskID = taskID
        self.handoff = handoff
        self.reporter = reporter
        self.wake = wake
        self.startWork = startWork
    }

    deinit {
        close(wake.read)
        close(wake.write)
    }

    /// Waits for the terminal and asks `question` (when there is one) on a thread of its own; `startWork`
    /// starts the task's work on that thread once the answer is yes.
    static func start(question: String?, taskID: TaskID, handoff: TerminalHandoff?, reporter: TaskReporter,
                      startWork: @escaping () throws -> any TaskExecution) throws -> TerminalStep {
        var ends: [CInt] = [0, 0]
        guard pipe(&ends) == 0, ends.allSatisfy({ fcntl($0, F_SETFD, FD_CLOEXEC) == 0 && fcntl($0, F_SETFL, O_NONBLOCK) == 0 })
        else { throw StepError("cannot start a task that uses the terminal: no pipe (errno \(errno))") }
        let step = TerminalStep(question: question, taskID: taskID, handoff: handoff, reporter: reporter, wake: (ends[0], ends[1]),
                                startWork: startWork)
        do {
            pthread_detach(try JoinableThread.start { step.run() })
        } catch {
            throw StepError("cannot start a task that uses the terminal: no thread (errno \(error.code))")
        }
        return step
    }

    private var isStopped: Bool { state.withLock { $0.isStopped } }

    private func run() {
        handoff?.waitForTerminal(taskID) { isStopped }
        if isStopped {
            reporter.finished(.failed(exitCode: nil, reason: "stopped before it started"))
        } else if let question {
            ask(question)
        } else {
            begin()
        }
    }

    private func ask(_ question: String) {
        guard let terminal = PromptTerminal.open() else {
            reporter.finished(.failed(exitCode: nil, reason: "cannot ask '\(question)': no terminal; answer yes with 'run --yes'"))
            return
        }
        defer { terminal.close() }
        terminal.write("\(taskID.rawValue): \(question) [y/N] ")
        switch terminal.readLine(orWakeOn: wake.read) {
        case .stopped:
            terminal.write("\n")
            reporter.finished(.failed(exitCode: nil, reason: "stopped at the prompt"))
        case .answer(let answer) where ["y", "yes"].contains(answer.lowercased()):
            begin()
        case .answer:
            reporter.finished(.failed(exitCode: nil, reason: "declined at the prompt"))
        case .closed:
            terminal.write("\n")
            reporter.finished(.failed(exitCode: nil, reason: "declined at the prompt (the terminal closed)"))
        }
    }

    private func begin() {
        let work: any TaskExecution
        do {
            work = try startWork()
        } catch {
            reporter.finished(.failed(exitCode: nil, reason: "\(error)"))
            return
        }
        let stopped = state.withLock { state -> Bool in
            state.started = work
            return state.isStopped
        }
        if stopped { work.kill() }
    }

    // MARK: - TaskExecution

    func terminate(grace: Double) {
        stop()?.terminate(grace: grace)
    }

    func kill() {
        stop()?.kill()
    }

    func pause() { state.withLock { $0.started }?.pause() }

    func resume() { state.withLock { $0.started }?.resume() }

    /// Marks the step stopped and wakes the asking thread; returns the work when it has started.
    private func stop() -> (any TaskExecution)? {
        let started = state.withLock { state -> (any TaskExecution)? in
            state.isStopped = true
            return state.started
        }
        var byte: UInt8 = 1
        _ = Glibc.write(wake.write, &byte, 1)  // a full pipe already wakes the thread
        handoff?.wakeWaiters()
        return started
    }
}

/// The terminal a prompt is asked on: `/dev/tty` when this process has one, else standard input and
/// standard error when standard input is a terminal.
struct PromptTerminal {
    enum Reading: Equatable {
        case answer(String)
        /// End of file: the terminal went away.
        case closed
        /// The wake descriptor became readable.
        case stopped
    }

    let input: CInt
    let output: CInt
    let ownsDescriptors: Bool

    static func open() -> PromptTerminal? {
        let tty = Glibc.open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        if tty >= 0 { return PromptTerminal(input: tty, output: tty, ownsDescriptors: true) }
        guard isatty(STDIN_FILENO) == 1 else { return nil }
        return PromptTerminal(input: STDIN_FILENO, output: STDERR_FILENO, ownsDescriptors: false)
    }

    func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let count = bytes.withUnsafeBytes { Glibc.write(output, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            bytes = bytes.dropFirst(count)
        }
    }

    /// One line from the terminal, trimmed, or what stopped the wait for it.
    func readLine(orWakeOn wake: CInt) -> Reading {
        var line: [UInt8] = []
        while true {
            var descriptors = [pollfd(fd: input, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 || descriptors[1].revents != 0 { return .stopped }
            var byte: UInt8 = 0
            let count = Glibc.read(input, &byte, 1)
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            if count <= 0 { return line.isEmpty ? .closed : .answer(Self.trimmed(line)) }
            if byte == UInt8(ascii: "\n") { return .answer(Self.trimmed(line)) }
            line.append(byte)
        }
    }

    func close() {
        if ownsDescriptors { _ = Glibc.close(input) }
    }

    private static func trimmed(_ line: [UInt8]) -> String {
        let text = String(decoding: line, as: UTF8.self)
        return String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
