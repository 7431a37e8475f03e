import Glibc
import JobGraphBasics

/// Runs work on a new thread with a given niceness, and waits for it.
///
/// Linux keeps niceness per thread, and a process starts with the niceness of the thread that created it,
/// so a child spawned from such a thread is niced from its first instruction. Raising a thread's niceness
/// needs no privilege, and the thread ends with the work, so nothing has to be lowered again. Costs one
/// thread creation and join (tens of microseconds), far less than exec'ing `nice`.
enum NicedThread {
    /// Calls `work` on a new thread whose niceness is `niceness` and returns what it returned.
    /// - Parameters:
    ///   - niceness: 0–19; below the calling thread's own needs privilege.
    ///   - subject: what the work is about, named in a `setpriority` error.
    /// - Throws: `SystemError` from `pthread_create` or `setpriority`, or whatever `work` threw.
    static func run<Value>(
        niceness: CInt, subject: String, _ work: @escaping () throws(SystemError) -> Value
    ) throws(SystemError) -> Value {
        var outcome: Result<Value, SystemError>?
        let handle = try JoinableThread.startThrowingSystemError {
            if setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness) == -1 {
                outcome = .failure(SystemError("setpriority", errno: .current, subject: subject))
            } else {
                outcome = Result { () throws(SystemError) -> Value in try work() }
            }
        }
        // Joining makes the thread's write of `outcome` visible here.
        let joined = pthread_join(handle, nil)
        guard joined == 0, let outcome else { throw SystemError("pthread_join", errno: Errno(rawValue: joined == 0 ? EINVAL : joined)) }
        return try outcome.get()
    }
}
