import Glibc

/// Starts a joinable POSIX thread running a Swift closure, which the thread owns until it returns.
///
/// `EventLoop` starts its thread with the same few lines; it may move here.
enum JoinableThread {
    /// Starts `body` on a new thread.
    /// - Returns: the handle, for `pthread_join`.
    /// - Throws: `SystemError` from `pthread_create`; `body` is then released without running.
    static func start(_ body: @escaping () -> Void) throws(SystemError) -> pthread_t {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var handle = pthread_t()
        let created = pthread_create(&handle, nil, { context in
            guard let context else { return nil }
            Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw SystemError("pthread_create", errno: Errno(rawValue: created))
        }
        return handle
    }

    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }
}
