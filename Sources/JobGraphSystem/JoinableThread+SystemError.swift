import Glibc
import JobGraphBasics

extension JoinableThread {
    /// `start(_:)`, failing with the `SystemError` this module's callers expect.
    static func startThrowingSystemError(_ body: @escaping () -> Void) throws(SystemError) -> pthread_t {
        do {
            return try start(body)
        } catch {
            throw SystemError("pthread_create", errno: Errno(rawValue: error.code))
        }
    }
}
