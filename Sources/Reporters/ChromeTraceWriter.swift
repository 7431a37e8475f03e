import Execution
import Foundation
import PipelineModel

/// Writes a run as Chrome trace-event JSON (`--trace FILE`), which Perfetto and chrome://tracing open:
/// one complete event per executed attempt, on one track per concurrently running slot, with the task's
/// state, attempt, queue and exit code as arguments. Written atomically when the run ends.
public final class ChromeTraceWriter: RunObserver {
    private struct Event: Encodable {
        var name: String
        var cat: String
        var ph = "X"
        var ts: Int64
        var dur: Int64
        var pid = 1
        var tid: Int
        var args: [String: String]
    }

    private let path: String
    private let failures: WriteFailures?
    private var events: [Event] = []
    private var running: [TaskID: (start: Double, lane: Int)] = [:]
    private var freeLanes: [Int] = []
    private var laneCount = 0
    private var isWritten = false

    /// - Parameters:
    ///   - path: where the trace goes; written when the run ends.
    ///   - failures: where a trace that cannot be written is reported; without one, a warning is printed.
    public init(path: String, failures: WriteFailures? = nil) {
        self.path = path
        self.failures = failures
    }

    public func observe(_ event: RunEvent) {
        // Written when the run finishes, before the observers after this one hear of it: a trace that
        // cannot be written then counts in `run-finished`'s exit status.
        if case .finished = event { write() }
        guard case .transition(let transition) = event else { return }
        if transition.to == .executing {
            running[transition.task] = (transition.elapsed, takeLane())
        } else if transition.from == .executing, let started = running.removeValue(forKey: transition.task) {
            freeLanes.append(started.lane)
            var arguments = ["state": transition.to.rawValue, "attempt": String(transition.attempt), "queue": transition.queue]
            if let code = transition.exitCode { arguments["exit_code"] = String(code) }
            if let error = transition.error { arguments["error"] = error }
            events.append(Event(name: transition.task.rawValue, cat: transition.queue, ts: microseconds(started.start),
                                dur: max(1, microseconds(transition.elapsed) - microseconds(started.start)),
                                tid: started.lane + 1, args: arguments))
        }
    }

    /// Writes the trace if the run's end has not already.
    public func close() {
        write()
    }

    private func write() {
        guard !isWritten else { return }
        isWritten = true
        struct Trace: Encodable {
            var traceEvents: [Event]
            var displayTimeUnit = "ms"
        }
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            var data = try encoder.encode(Trace(traceEvents: events))
            // Track names as metadata events, so each slot shows as "slot N".
            if laneCount > 0, let text = String(data: data, encoding: .utf8), let insert = text.range(of: "\"traceEvents\":[") {
                let metadata = (0..<laneCount).map { lane in
                    "{\"args\":{\"name\":\"slot \(lane + 1)\"},\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":\(lane + 1)}"
                }.joined(separator: ",")
                let separator = events.isEmpty ? "" : ","
                data = Data((text[..<insert.upperBound] + metadata + separator + text[insert.upperBound...]).utf8)
            }
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            if let failures {
                failures.record(.trace, path: path, errno: Self.systemCode(of: error))
            } else {
                Console.standardError.write(line: "warning: cannot write the trace '\(path)': \(error.localizedDescription)")
            }
        }
    }

    /// The `errno` behind Foundation's file error, for the system's own wording ("No space left on device").
    private static func systemCode(of error: any Error) -> Int32 {
        let error = error as NSError
        if error.domain == NSPOSIXErrorDomain { return Int32(error.code) }
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return Int32(underlying.code)
        }
        guard error.domain == NSCocoaErrorDomain else { return EIO }
        switch CocoaError.Code(rawValue: error.code) {
        case .fileWriteOutOfSpace: return ENOSPC
        case .fileNoSuchFile, .fileReadNoSuchFile: return ENOENT
        case .fileWriteNoPermission: return EACCES
        case .fileWriteVolumeReadOnly: return EROFS
        default: return EIO
        }
    }

    private func takeLane() -> Int {
        if let lane = freeLanes.min(), let position = freeLanes.firstIndex(of: lane) {
            freeLanes.remove(at: position)
            return lane
        }
        laneCount += 1
        return laneCount - 1
    }

    private func microseconds(_ seconds: Double) -> Int64 { Int64((seconds * 1_000_000).rounded()) }
}
