import Execution
import PipelineModel

/// Collects a run's events for assertions.
public final class RecordingObserver: RunObserver {
    public private(set) var events: [RunEvent] = []

    public init() {}

    public func observe(_ event: RunEvent) { events.append(event) }

    public var transitions: [TaskTransition] {
        events.compactMap { if case .transition(let transition) = $0 { transition } else { nil } }
    }

    /// `"task: from -> to"` for each transition, in order.
    public var transitionLines: [String] {
        transitions.map { "\($0.task): \($0.from.rawValue) -> \($0.to.rawValue)" }
    }

    public func finalState(of task: TaskID) -> TaskState? {
        transitions.last { $0.task == task }?.to
    }
}

extension Runner {
    /// Runs to the end while `observer` drains the event stream; returns the summary.
    public func run(observedBy observer: RecordingObserver) async -> RunSummary {
        async let summary = run()
        for await event in events { observer.observe(event) }
        return await summary
    }
}
