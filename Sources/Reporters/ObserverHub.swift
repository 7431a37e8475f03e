import Execution

/// Hands a run's events to its observers from a single task, with a periodic tick between events.
public enum ObserverHub {
    private enum Input: Sendable {
        case event(RunEvent)
        case tick
        case end
    }

    /// Drains `events` into `observers` until the stream ends, then closes each observer.
    /// - Parameter tickInterval: how often observers hear `tick()` when no event comes.
    public static func drain(_ events: AsyncStream<RunEvent>, into observers: sending [any RunObserver],
                             tickInterval: Duration = .milliseconds(250)) async {
        let (inputs, continuation) = AsyncStream.makeStream(of: Input.self, bufferingPolicy: .unbounded)
        let forward = Task {
            for await event in events { continuation.yield(.event(event)) }
            continuation.yield(.end)
        }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: tickInterval)  // cancellation ends the loop on the next check
                continuation.yield(.tick)
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
        continuation.finish()
        for observer in observers { observer.close() }
    }
}
