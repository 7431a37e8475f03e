#if canImport(Glibc)
import Glibc
#endif

/// A value that threads share, reachable only while holding its lock.
///
/// Why not `Synchronization.Mutex`: on Linux it hands a contended lock over with `FUTEX_LOCK_PI`, where the
/// kernel acquires the lock for the waiter, so ThreadSanitizer sees no acquire and reports races that are
/// not there. A `pthread_mutex_t` is understood by ThreadSanitizer, keeping `swift test --sanitize=thread`
/// meaningful, and costs the same when uncontended.
///
/// `@unchecked Sendable`: every access to `value` happens inside `withLock`, under `mutex`.
public final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value; safe from any thread, not reentrant.
    @inline(__always)
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
