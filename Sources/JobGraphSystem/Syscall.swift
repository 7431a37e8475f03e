import Glibc

// Every system call in this module goes through one of these two functions, as swift-system's
// `valueOrErrno` does: the -1 convention becomes a typed throw in one place, and `EINTR` is retried here
// rather than at each call site.

/// Calls `body` (a call that returns -1 and sets `errno` on failure), retrying `EINTR` unless asked not to.
@inline(__always)
func sys<Result: FixedWidthInteger>(
    _ name: StaticString, subject: String? = nil, retryingInterrupts: Bool = true, _ body: () -> Result
) throws(SystemError) -> Result {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = errno
        if code == EINTR && retryingInterrupts { continue }
        throw SystemError(String(describing: name), errno: Errno(rawValue: code), subject: subject)
    }
}

/// Calls `body` (a `posix_*` or `pthread_*` call that returns the error number itself, 0 on success).
@inline(__always)
func sysReturningError(_ name: StaticString, subject: String? = nil, _ body: () -> CInt) throws(SystemError) {
    let code = body()
    if code != 0 { throw SystemError(String(describing: name), errno: Errno(rawValue: code), subject: subject) }
}
