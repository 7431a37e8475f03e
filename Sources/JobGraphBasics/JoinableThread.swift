#if canImport(Glibc)
import Glibc
#endif

/// Starts a joinable POSIX thread running a Swift closure, which the thread owns until it returns.
public enum JoinableThread {
    /// `pthread_create` refused a thread; `code` is the error number it returned.
    public struct StartFailure: Error, Sendable {
        public let code: Int32
    }

    /// Starts `body` on a new thread.
    /// - Returns: the handle, for `pthread_join`.
    /// - Throws: `StartFailure`; `body` is then released without running.
    public static func start(_ body: @escaping () -> Void) throws(StartFailure) -> pthread_t {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var handle = pthread_t()
        let created = pthread_create(&handle, nil, { context in
            guard let context else { return nil }
            Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw StartFailure(code: created)
        }
        return handle
    }

    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }
}
