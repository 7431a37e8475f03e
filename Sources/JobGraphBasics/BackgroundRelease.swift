import Dispatch

/// Frees large values on a background thread instead of the caller's.
///
/// Why: the tables a run's up-to-date pass reads (100,000 tasks' fingerprints and file records) took
/// 60 ms to free on the run's thread, between the pass and the run's first events (perf, no-op rerun).
public enum BackgroundRelease {
    /// Frees `value` on a background thread, provided the caller keeps no other copy of it.
    public static func release<Value: Sendable>(_ value: consuming Value) {
        let moved = value
        DispatchQueue.global(qos: .utility).async { withExtendedLifetime(moved) {} }
    }
}
