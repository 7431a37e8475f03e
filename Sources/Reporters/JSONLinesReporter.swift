import Foundation
import Execution
import PipelineModel

/// `--progress json` and `--events FILE`: one JSON object per line for each transition (contract: "Task
/// states and the live view"), throttled download progress, and a final `finished` record.
///
/// Transitions are `TaskTransition` encoded as is, so absent `exit_code`, `error` and `duration` are left
/// out rather than null. Call only from the run's event stream, one event at a time.
public final class JSONLinesReporter: RunObserver {
    /// Seconds of run time between two progress records of one task.
    public static let progressInterval = 0.5

    private let sink: any TextSink
    /// The `--events` file this reporter opened, and so closes.
    private let ownedFile: EventFile?
    private let now: () -> Date
    private let encoder: JSONEncoder
    private var runStart: Date?
    private var lastProgress: [TaskID: Double] = [:]

    /// Writes to `sink`, usually `Console.standardOutput`; `now` stamps progress and the finished record.
    public init(sink: any TextSink, now: @escaping () -> Date = Date.init) {
        self.sink = sink
        self.ownedFile = nil
        self.now = now
        self.encoder = Self.makeEncoder()
    }

    /// Writes to a new file at `path` (an existing one is truncated), closed by `close()`.
    /// - Throws: `EventFileError` with the path when the file cannot be opened.
    /// - Parameter failures: where a write that fails (a full disk) is reported.
    public convenience init(path: String, failures: WriteFailures? = nil, now: @escaping () -> Date = Date.init) throws(EventFileError) {
        self.init(file: try EventFile(path: path, failures: failures), now: now)
    }

    private init(file: EventFile, now: @escaping () -> Date) {
        self.sink = file
        self.ownedFile = file
        self.now = now
        self.encoder = Self.makeEncoder()
    }

    /// Writes the record for one event, if it has one.
    public func observe(_ event: RunEvent) {
        switch event {
        case .started(let start):
            runStart = start.time
        case .transition(let transition):
            emit(transition)
        case .progress(let task, let bytes, let total):
            let time = now()
            let elapsed = elapsed(at: time)
            if let last = lastProgress[task], elapsed - last < Self.progressInterval { return }
            lastProgress[task] = elapsed
            emit(ProgressRecord(time: time, elapsed: elapsed, task: task, bytes: bytes, total: total))
        case .finished(let summary):
            let time = now()
            emit(FinishedRecord(time: time, elapsed: elapsed(at: time), summary: summary))
        case .output, .suspended, .stopping:
            // Task output goes to the task's log; the contract's stream is transitions.
            break
        }
    }

    /// Closes the file when this reporter opened it; a console stays open.
    public func close() {
        ownedFile?.close()
    }

    private func elapsed(at time: Date) -> Double {
        guard let runStart else { return 0 }
        // Microseconds: a difference of two dates carries float noise (0.49999994) nobody wants to read.
        return (max(0, time.timeIntervalSince(runStart)) * 1e6).rounded() / 1e6
    }

    private func emit(_ record: some Encodable) {
        // Encoding these records cannot fail (non-finite numbers become strings); if it ever did, losing one
        // line of progress is better than stopping the run.
        guard let data = try? encoder.encode(record), let text = String(data: data, encoding: .utf8) else { return }
        sink.write(text + "\n")
    }

    private static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(style))
        }
        return encoder
    }
}

/// `{"time","elapsed","task","event":"progress","bytes","total"}`; `total` only when known.
private struct ProgressRecord: Encodable {
    var time: Date
    var elapsed: Double
    var task: TaskID
    var event = "progress"
    var bytes: Int64
    var total: Int64?
}

/// `{"time","elapsed","event":"finished", one count per state, "wall_time", "stopped_by"}`.
///
/// Every terminal state has a count, zero included, so a consumer need not guess; states a task can only
/// be left in by a stop (pending …) appear when non-zero.
private struct FinishedRecord: Encodable {
    var time: Date
    var elapsed: Double
    var summary: RunSummary

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(time, forKey: Key("time"))
        try container.encode(elapsed, forKey: Key("elapsed"))
        try container.encode("finished", forKey: Key("event"))
        for state in TaskState.allCases {
            let count = summary.counts[state] ?? 0
            if state.isTerminal || count > 0 { try container.encode(count, forKey: Key(state.rawValue)) }
        }
        try container.encode(summary.wallTime, forKey: Key("wall_time"))
        if let stop = summary.stop {
            try container.encode(stop == .interrupt ? "SIGINT" : "SIGTERM", forKey: Key("stopped_by"))
        }
    }
}
