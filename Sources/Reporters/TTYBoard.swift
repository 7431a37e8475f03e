import Execution
import JobGraphBasics
import PipelineModel

/// `--progress tty`: a live board of the executing tasks, redrawn in place below the permanent lines.
///
/// The board is a header (pipeline, tasks done of total, running, failed, elapsed), a banner while the
/// queues are suspended, and one row per executing task, cut to the terminal's size. Failed tasks' lines,
/// stop notices and task output are printed above it and stay, as ninja and cargo do.
///
/// Redrawing is throttled to once per `redrawInterval` of the injected clock: between redraws events only
/// update memory (and queue permanent lines), so a burst of thousands of events costs one write. The
/// `.finished` event always writes: it erases the board and leaves only the permanent lines. Call
/// `observe` and `tick` only from the run's event stream, one call at a time.
public final class TTYBoard: RunObserver {
    /// The shortest time between two redraws.
    public static let redrawInterval: Duration = .milliseconds(100)

    private struct Row {
        var queue: String
        var attempt: Int
        var started: ContinuousClock.Instant
        /// Starting order, so rows keep their place while others come and go.
        var sequence: Int
        var bytes: Int64?
        var total: Int64?
    }

    private let sink: any TextSink
    private let terminalSize: () -> TerminalSize
    private let clock: () -> ContinuousClock.Instant
    private let explains: Bool
    /// Tasks that use the terminal (`interactive`, `prompt`): while one executes, the board is erased and
    /// not drawn, so the task has the screen (docs/pipeline.md, "Interactive tasks").
    private let terminalTasks: Set<TaskID>
    /// The terminal task executing now.
    private var terminalTask: TaskID?
    /// Told when the board steps aside, so that the terminal task writes only then.
    private let handoff: TerminalHandoff?

    private var pipelineFile = ""
    private var declaredTaskCount = 0
    private var runStart: ContinuousClock.Instant?
    private var states: [TaskID: TaskState] = [:]
    private var doneCount = 0
    private var failedCount = 0
    /// Tasks restored from the output cache: done without running, said apart on the board (issue 33).
    private var restoredCount = 0
    private var rows: [TaskID: Row] = [:]
    private var nextSequence = 0
    private var isSuspended = false
    /// What the run waits for on its executor (a pending Slurm allocation), shown under the header.
    private var executorWaiting: String?
    private var stop: RunStop?
    private var isFinished = false
    private var grouping: OutputGrouping
    /// What the executing tasks hold against the totals, when the pipeline declares resources.
    private var resourceUse: ResourceUse?

    private var pendingLines: [String] = []
    /// Lines the board occupies on screen now, which the next write moves up over and clears.
    private var drawnLineCount = 0
    private var lastWrite: ContinuousClock.Instant?

    /// - Parameters:
    ///   - sink: the terminal, usually `Console.standardOutput`.
    ///   - terminalSize: asked at each redraw, so a resized window is followed.
    ///   - clock: the monotonic clock that throttles redraws and measures elapsed times.
    ///   - output: how the lines tasks print are shown above the board.
    ///   - explains: also keep a line for each transition that says why its task runs or not (`run --explain`).
    ///   - terminalTasks: tasks that use the terminal, for which the board steps aside while they execute.
    ///   - handoff: told once the board has stepped aside for one of them.
    ///   - resourceUse: shown under the header, for a pipeline that declares resources.
    public init(sink: any TextSink, terminalSize: @escaping () -> TerminalSize = { .fallback },
                clock: @escaping () -> ContinuousClock.Instant = { ContinuousClock.now }, output: OutputMode = .prefixed,
                explains: Bool = false, terminalTasks: Set<TaskID> = [], handoff: TerminalHandoff? = nil,
                resourceUse: ResourceUse? = nil) {
        self.resourceUse = resourceUse
        self.terminalTasks = terminalTasks
        self.handoff = handoff
        if !terminalTasks.isEmpty { handoff?.boardShown() }
        self.sink = sink
        self.terminalSize = terminalSize
        self.clock = clock
        self.grouping = OutputGrouping(mode: output)
        self.explains = explains
    }

    /// Updates the board's state, and redraws when the last write is at least `redrawInterval` old.
    public func observe(_ event: RunEvent) {
        guard !isFinished else { return }
        let now = clock()
        if runStart == nil { runStart = now }
        switch event {
        case .started(let start):
            runStart = now
            pipelineFile = start.pipelineFile
            declaredTaskCount = start.taskCount
        case .transition(let transition):
            record(transition, at: now)
            if terminalTasks.contains(transition.task) {
                if transition.to == .executing {
                    // Erased at once, not when a redraw is due: the task is about to write to the screen.
                    terminalTask = transition.task
                    writeFrame(board: [])
                    handoff?.steppedAside(for: transition.task)
                    return
                } else if terminalTask == transition.task {
                    terminalTask = nil
                    lastWrite = nil
                }
            }
        case .output(let task, let line):
            pendingLines += grouping.lines(for: line, of: task)
        case .progress(let task, let bytes, let total):
            rows[task]?.bytes = bytes
            rows[task]?.total = total
        case .suspended(let suspended):
            isSuspended = suspended
        case .executorWaiting(let text):
            executorWaiting = text
        case .stopping(let stop):
            self.stop = stop
            pendingLines.append("\(stamp(at: now)) \(RunText.stopping(stop))")
        case .finished:
            isFinished = true
            handoff?.boardClosed()
            pendingLines += grouping.remainingBlocks()
            writeFrame(board: [])
            return
        }
        redrawIfDue(at: now)
    }

    /// Redraws if due, so elapsed times advance while no event arrives; call it every few hundred ms.
    public func tick() {
        guard !isFinished, runStart != nil else { return }
        redrawIfDue(at: clock())
    }

    /// Erases the board if the run ended without `.finished`, keeping the permanent lines.
    public func close() {
        guard !isFinished else { return }
        isFinished = true
        handoff?.boardClosed()
        pendingLines += grouping.remainingBlocks()
        if drawnLineCount > 0 || !pendingLines.isEmpty { writeFrame(board: []) }
    }

    private func record(_ transition: TaskTransition, at now: ContinuousClock.Instant) {
        resourceUse?.record(transition)
        let previous = states[transition.task]
        if let previous, previous.isTerminal { doneCount -= 1 }
        if previous == .failed { failedCount -= 1 }
        if previous == .restored { restoredCount -= 1 }
        states[transition.task] = transition.to
        if transition.to.isTerminal { doneCount += 1 }
        if transition.to == .failed { failedCount += 1 }
        if transition.to == .restored { restoredCount += 1 }

        if transition.to == .executing {
            rows[transition.task] = Row(queue: transition.queue, attempt: transition.attempt, started: now,
                                        sequence: nextSequence)
            nextSequence += 1
        } else {
            rows[transition.task] = nil
        }
        let line = "\(RunText.elapsedStamp(transition.elapsed)) \(RunText.transition(transition, showsReason: explains))"
        if let block = grouping.block(endedBy: transition, header: line) {
            pendingLines += block
        } else if transition.to == .failed || (explains && transition.reason != nil) {
            pendingLines.append(line)
        }
    }

    private func redrawIfDue(at now: ContinuousClock.Instant) {
        if terminalTask != nil { return }
        if let lastWrite, now - lastWrite < Self.redrawInterval { return }
        lastWrite = now
        writeFrame(board: boardLines(at: now))
    }

    /// One write: move up over the old board and clear it, print the queued permanent lines, draw `board`.
    private func writeFrame(board: [String]) {
        var text = ""
        if drawnLineCount > 0 { text += "\r\u{1B}[\(drawnLineCount)A\u{1B}[J" }
        for line in pendingLines { text += line + "\n" }
        for line in board { text += line + "\n" }
        pendingLines.removeAll()
        drawnLineCount = board.count
        if !text.isEmpty { sink.write(text) }
    }

    private func boardLines(at now: ContinuousClock.Instant) -> [String] {
        let size = terminalSize()
        // One column spare: a line filling the width makes some terminals wrap, which would break the
        // count of lines to move up over. One row spare keeps the permanent line above in sight.
        let width = max(1, size.columns - 1)
        let height = max(1, size.rows - 1)

        let total = max(declaredTaskCount, states.count)
        var header = pipelineFile.isEmpty ? "" : "\(pipelineFile): "
        header += "\(doneCount)/\(total) done, \(rows.count) running"
        if restoredCount > 0 { header += ", \(restoredCount) restored" }
        if failedCount > 0 { header += ", \(failedCount) failed" }
        header += ", \(RunText.clock((now - (runStart ?? now)).inSeconds))"
        var lines = [header]
        if let resourceUse { lines.append("  " + resourceUse.text) }
        if isSuspended { lines.append("SUSPENDED — send SIGUSR2 to resume") }
        if let executorWaiting { lines.append(executorWaiting) }
        if let stop { lines.append("stopping: \(RunText.stopped(stop)), waiting for running tasks") }

        let ordered = rows.sorted { $0.value.sequence < $1.value.sequence }
        var room = max(0, height - lines.count)
        let cut = ordered.count > room
        if cut { room = max(0, room - 1) }
        let shown = ordered.prefix(room)
        let idWidth = shown.map { $0.key.rawValue.count }.max() ?? 0
        let queueWidth = shown.map { $0.value.queue.count }.max() ?? 0
        for (id, row) in shown {
            var line = "  " + padded(id.rawValue, idWidth) + "  " + padded(row.queue, queueWidth)
            line += "  " + RunText.clock((now - row.started).inSeconds)
            if row.attempt > 1 { line += "  attempt \(row.attempt)" }
            if let bytes = row.bytes { line += "  " + progressText(bytes: bytes, total: row.total) }
            lines.append(line)
        }
        if cut { lines.append("  … and \(ordered.count - shown.count) more") }
        return lines.prefix(height).map { RunText.truncated($0, width: width) }
    }

    private func progressText(bytes: Int64, total: Int64?) -> String {
        guard let total, total > 0 else { return RunText.bytes(bytes) }
        let percent = min(100, max(0, Int(Double(bytes) * 100 / Double(total))))
        return "\(RunText.bytes(bytes)) / \(RunText.bytes(total)) (\(percent)%)"
    }

    private func stamp(at now: ContinuousClock.Instant) -> String {
        RunText.elapsedStamp((now - (runStart ?? now)).inSeconds)
    }

    private func padded(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }
}
