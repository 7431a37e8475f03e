import Execution
import JobGraphBasics

/// Hands a run's events to its observers from a single task, with a periodic tick between events.
public enum ObserverHub {
    private enum Input: Sendable {
        case event(RunEvent)
        case tick
        case end
    }

    /// Drains `events` into `observers` until the stream ends, then closes each observer.
    /// - Parameter tickInterval: how often observers hear `tick()` when no event comes.
    public static func drain(_ events: EventChannel<RunEvent>, into observers: sending [any RunObserver],
                             tickInterval: Duration = .milliseconds(250)) async {
        let inputs = EventChannel<Input>()
        let forward = Task {
            for await event in events { inputs.yield(.event(event)) }
            inputs.yield(.end)
        }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: tickInterval)  // cancellation ends the loop on the next check
                inputs.yield(.tick)
            }
        }
        loop: for await input in inputs {
            switch input {
            case .event(let event): for observer in observers { observer.observe(event) }
            case .tick: for observer in observers { observer.tick() }
            case .end: break loop
            }
        }
        ticker.cancel()
        _ = await forward.value
        inputs.finish()
        for observer in observers { observer.close() }
    }
}
