import JobGraphBasics
import Foundation

/// An `Operation` whose work ends later, on another thread: it stays executing after `start()` returns
/// until `finish()` is called, and its dependents start only then.
///
/// swift-corelibs-foundation (checked on Swift 6.3.1, Linux) honours an asynchronous operation that
/// overrides `isExecuting` and `isFinished` and announces their changes with `willChangeValue` /
/// `didChangeValue`: the queue frees the slot and readies dependents on the `isFinished` change.
/// It also starts a dependent of a *cancelled* operation as soon as that one finishes, so whether a
/// task runs, is skipped or is cancelled is decided by the `Plan`, never by the queue.
///
/// `@unchecked Sendable`: the two flags live in a `Locked` box; everything else is immutable.
open class AsyncTaskOperation: Operation, @unchecked Sendable {
    private struct Flags {
        var executing = false
        var finished = false
        var finishing = false
    }

    private let flags = Locked(Flags())

    override open var isAsynchronous: Bool { true }
    override open var isExecuting: Bool { flags.withLock { $0.executing } }
    override open var isFinished: Bool { flags.withLock { $0.finished } }

    override public final func start() {
        if isCancelled {
            finish()
            return
        }
        willChangeValue(forKey: "isExecuting")
        flags.withLock { $0.executing = true }
        didChangeValue(forKey: "isExecuting")
        execute()
    }

    /// Begins the work; call `finish()` once it is over, from any thread.
    open func execute() {
        finish()
    }

    /// Marks the operation finished; the queue then frees its slot and its dependents may start.
    /// Safe to call from any thread, also on an operation never added to a queue; later calls do nothing.
    public final func finish() {
        let isFirstCall = flags.withLock { flags in
            defer { flags.finishing = true }
            return !flags.finishing
        }
        guard isFirstCall else { return }
        willChangeValue(forKey: "isFinished")
        willChangeValue(forKey: "isExecuting")
        flags.withLock { flags in
            flags.executing = false
            flags.finished = true
        }
        didChangeValue(forKey: "isExecuting")
        didChangeValue(forKey: "isFinished")
    }
}
