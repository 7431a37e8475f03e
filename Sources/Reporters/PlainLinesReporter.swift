import Foundation
import Execution
import PipelineModel

/// `--progress plain`: one line per transition and per line a task prints, for logs, pipes and `TERM=dumb`;
/// none for a task found up to date before the run, unless `explains`.
///
/// Lines look like `[  1.02s] test  executing -> failed  (0.60s, exit 1)` (contract: "Task states and the
/// live view"); a task's output is shown as `output` says (`test | line` by default). Call only from the run's
/// event stream, one event at a time.
public final class PlainLinesReporter: RunObserver {
    private let sink: any TextSink
    private let now: () -> Date
    private let explains: Bool
    private var runStart: Date?
    private var lastElapsed = 0.0
    private var grouping: OutputGrouping

    /// - Parameters:
    ///   - sink: where the lines go, usually `Console.standardOutput`.
    ///   - now: the wall clock, which stamps events that carry no time of their own (suspend, stop).
    ///   - output: how the lines tasks print are shown.
    ///   - explains: end each line that has one with why the task runs or not (`run --explain`):
    ///     `t  ready -> executing  (input 'a.txt' changed)`.
    public init(sink: any TextSink, now: @escaping () -> Date = Date.init, output: OutputMode = .prefixed, explains: Bool = false) {
        self.sink = sink
        self.now = now
        self.grouping = OutputGrouping(mode: output)
        self.explains = explains
    }

    /// Writes the lines for one event, if it has any.
    public func observe(_ event: RunEvent) {
        observe(batch: [event])
    }

    /// Writes the lines for events that arrived together, a few writes of whole lines for the lot.
    public func observe(batch events: [RunEvent]) {
        var bytes: [UInt8] = []
        for event in events {
            // A task found up to date before the run gets no lines (the summary counts it), unless asked why.
            if case .transition(let transition) = event, transition.isUpToDateBeforeRun, !explains { continue }
            // A transition is most of a run's lines: appended as it is made, without an array per event.
            if case .transition(let transition) = event, !grouping.isGrouped {
                lastElapsed = transition.elapsed
                RunText.appendElapsedStamp(transition.elapsed, to: &bytes)
                bytes.append(UInt8(ascii: " "))
                RunText.appendTransition(transition, showsReason: explains, to: &bytes)
                bytes.append(UInt8(ascii: "\n"))
            } else {
                for line in lines(for: event) {
                    bytes += line.utf8
                    bytes.append(UInt8(ascii: "\n"))
                }
            }
            // In pieces of about 64 KiB: the 30,000 lines of a large batch need not all be held at once.
            if bytes.count >= 1 << 16 {
                sink.write(String(decoding: bytes, as: UTF8.self))
                bytes.removeAll(keepingCapacity: true)
            }
        }
        if !bytes.isEmpty { sink.write(String(decoding: bytes, as: UTF8.self)) }
    }

    private func lines(for event: RunEvent) -> [String] {
        switch event {
        case .started(let start):
            runStart = start.time
            let tasks = start.taskCount == 1 ? "1 task" : "\(start.taskCount) tasks"
            return ["\(RunText.elapsedStamp(0)) running \(start.pipelineFile): \(tasks), at most \(start.jobs) at once"]
        case .transition(let transition):
            lastElapsed = transition.elapsed
            let line = "\(RunText.elapsedStamp(transition.elapsed)) \(RunText.transition(transition, showsReason: explains))"
            return grouping.block(endedBy: transition, header: line) ?? [line]
        case .output(let task, let line):
            return grouping.lines(for: line, of: task)
        case .progress:
            // A line per chunk would drown the transitions; the board and JSON show progress instead.
            return []
        case .suspended(let isSuspended):
            let what = isSuspended ? "queues suspended (SIGUSR2 resumes)" : "queues resumed"
            return ["\(RunText.elapsedStamp(currentElapsed())) \(what)"]
        case .stopping(let stop):
            return ["\(RunText.elapsedStamp(currentElapsed())) \(RunText.stopping(stop))"]
        case .executorWaiting(let text):
            // Said when it changes; the end of a wait shows in the transitions that follow it.
            return text.map { ["\(RunText.elapsedStamp(currentElapsed())) \($0)"] } ?? []
        case .finished:
            // The summary follows in every progress mode; it says how the run ended.
            return grouping.remainingBlocks()
        }
    }

    /// Shows any output still held, for a run that ended without `.finished`.
    public func close() {
        sink.write(lines: grouping.remainingBlocks())
    }

    /// Seconds since the run started by the wall clock, never behind the last transition's stamp.
    private func currentElapsed() -> Double {
        guard let runStart else { return lastElapsed }
        return max(lastElapsed, now().timeIntervalSince(runStart))
    }
}
