import Foundation
import Execution
import JobGraphBasics
import PipelineModel

/// `--progress json` and `--events FILE`: one JSON object per line (docs/events.md,
/// schemas/events.schema.json): `run-started`, one `transition` per change of a task's state, throttled
/// download `progress`, and `run-finished`.
///
/// Every line begins `time`, `elapsed`, `event`; the other keys follow in one fixed order per kind, and
/// absent optional fields are left out rather than null. Call only from the run's event stream, one event
/// at a time.
public final class JSONLinesReporter: RunObserver {
    /// Seconds of run time between two progress records of one task.
    public static let progressInterval = 0.5

    private let sink: any TextSink
    /// The `--events` file this reporter opened, and so closes.
    private let ownedFile: EventFile?
    private let now: () -> Date
    /// The run's write failures, so that `run-finished` carries the exit status the process returns.
    private let failures: WriteFailures?
    private var runStart: Date?
    private var lastProgress: [TaskID: Double] = [:]
    /// The records of a batch being observed, written together at its end; `nil` outside a batch.
    private var pending: [UInt8]?

    /// Writes to `sink`, usually `Console.standardOutput`; `now` stamps progress and the finished record.
    /// - Parameter failures: the run's write failures, which `run-finished`'s `exit_status` counts.
    public init(sink: any TextSink, failures: WriteFailures? = nil, now: @escaping () -> Date = Date.init) {
        self.sink = sink
        self.ownedFile = nil
        self.failures = failures
        self.now = now
    }

    /// Writes to a new file at `path` (an existing one is truncated), closed by `close()`.
    /// - Throws: `EventFileError` with the path when the file cannot be opened.
    /// - Parameters:
    ///   - appending: write after what the file holds instead of truncating it.
    ///   - failures: where a write that fails (a full disk) is reported.
    public convenience init(path: String, appending: Bool = false, failures: WriteFailures? = nil,
                            now: @escaping () -> Date = Date.init) throws(EventFileError) {
        self.init(file: try EventFile(path: path, appending: appending, failures: failures), failures: failures, now: now)
    }

    private init(file: EventFile, failures: WriteFailures?, now: @escaping () -> Date) {
        self.sink = file
        self.ownedFile = file
        self.failures = failures
        self.now = now
    }

    /// Writes the records for events that arrived together, a few writes of whole lines for the lot.
    public func observe(batch events: [RunEvent]) {
        pending = []
        for event in events { observe(event) }
        if let bytes = pending, !bytes.isEmpty { sink.write(String(decoding: bytes, as: UTF8.self)) }
        pending = nil
    }

    /// Writes the record for one event, if it has one.
    public func observe(_ event: RunEvent) {
        switch event {
        case .started(let start):
            runStart = start.time
            var line = header(time: start.time, elapsed: 0, event: "run-started")
            line.add("pipeline", start.pipelineFile)
            line.add("version", JobGraphVersion.current)
            line.add("tasks", start.taskCount)
            line.add("jobs", start.jobs)
            if let totals = start.resources {
                var object = JSONObjectWriter()
                for total in totals { object.add(total.name, total.total) }
                line.add("resources", json: object.object)
            }
            emit(line)
        case .transition(let transition):
            var line = header(time: transition.time, elapsed: transition.elapsed, event: "transition")
            line.add("task", transition.task.rawValue)
            line.add("from", transition.from.rawValue)
            line.add("to", transition.to.rawValue)
            line.add("attempt", transition.attempt)
            line.add("queue", transition.queue)
            line.addIfPresent("exit_code", transition.exitCode.map(Int64.init))
            line.addIfPresent("error", transition.error)
            line.addIfPresent("duration", transition.duration)
            line.addIfPresent("reason", transition.reason)
            line.addIfPresent("slurm_job", transition.executorJob)
            line.addIfPresent("cache_key", transition.cacheKey)
            line.addIfPresent("slurm_state", transition.executorState)
            if let resources = transition.resources {
                var object = JSONObjectWriter()
                for amount in resources.amounts { object.add(amount.name, amount.value) }
                line.add("resources", json: object.object)
            }
            line.addIfPresent("resources_note", transition.resourcesNote)
            emit(line)
        case .progress(let task, let bytes, let total):
            let time = now()
            let elapsed = elapsed(at: time)
            if let last = lastProgress[task], elapsed - last < Self.progressInterval { return }
            lastProgress[task] = elapsed
            var line = header(time: time, elapsed: elapsed, event: "progress")
            line.add("task", task.rawValue)
            line.add("bytes", bytes)
            line.addIfPresent("total", total)
            emit(line)
        case .finished(let summary):
            let time = now()
            var line = header(time: time, elapsed: elapsed(at: time), event: "run-finished")
            line.add("counts", json: Self.counts(summary))
            line.add("wall_time", summary.wallTime)
            // What failed to be written so far counts: the trace is written on this event before it, and
            // the event files before the console (see `RunContext.runOnce`).
            line.add("exit_status", Int(RunExitStatus.of(summary, writeFailures: failures)))
            if let stop = summary.stop { line.add("stopped_by", stop == .interrupt ? "SIGINT" : "SIGTERM") }
            line.add("critical_path", json: JSONObjectWriter.array(summary.criticalPath.map(\.rawValue)))
            emit(line)
        case .output, .suspended, .stopping, .executorWaiting:
            // Task output goes to the task's log; the stream is the tasks' states.
            break
        }
    }

    /// Closes the file when this reporter opened it; a console stays open.
    public func close() {
        ownedFile?.close()
    }

    /// Every terminal state has a count, zero included, so a consumer need not guess, but for `restored`,
    /// which only a run with the output cache reaches; it and the states a task can only be left in by a
    /// stop (pending …) appear when non-zero (docs/events.md).
    private static func counts(_ summary: RunSummary) -> String {
        var counts = JSONObjectWriter()
        for state in TaskState.allCases {
            let count = summary.counts[state] ?? 0
            if state.isTerminal && state != .restored || count > 0 { counts.add(state.rawValue, count) }
        }
        return counts.object
    }

    private func header(time: Date, elapsed: Double, event: String) -> JSONObjectWriter {
        var line = JSONObjectWriter()
        line.add("time", UTCTimestamp.string(time))
        line.add("elapsed", elapsed)
        line.add("event", event)
        return line
    }

    private func elapsed(at time: Date) -> Double {
        guard let runStart else { return 0 }
        // Microseconds: a difference of two dates carries float noise (0.49999994) nobody wants to read.
        return (max(0, time.timeIntervalSince(runStart)) * 1e6).rounded() / 1e6
    }

    private func emit(_ line: JSONObjectWriter) {
        guard var bytes = pending else { return sink.write(line.object + "\n") }
        pending = nil  // `bytes` is the only reference while it grows
        line.appendObject(to: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        if bytes.count >= 1 << 16 {
            sink.write(String(decoding: bytes, as: UTF8.self))
            bytes.removeAll(keepingCapacity: true)
        }
        pending = bytes
    }
}
