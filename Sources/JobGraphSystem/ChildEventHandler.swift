/// A caller-chosen number that identifies a watched child in the events the loop delivers.
///
/// The loop never interprets it, so the caller can use a task index or any counter; it is chosen before
/// watching starts, so no event can arrive before the caller knows the token.
public struct ChildToken: RawRepresentable, Hashable, Sendable {
    /// The caller's number.
    public let rawValue: UInt64

    /// A token carrying `rawValue`.
    public init(rawValue: UInt64) { self.rawValue = rawValue }
}

/// Receives what a watched child prints and how it ends.
///
/// Every method is called **on the `EventLoop` thread**, one call at a time. Implementations must be quick
/// (hand heavy work to another thread) and must not block, or every other child's output and exit waits;
/// state they share with other threads needs its own lock. For each child the loop calls `printed` for
/// every line, in order, then exactly one of `exited` or `failed`, and nothing after that.
public protocol ChildEventHandler: Sendable {
    /// One line of the child's combined stdout and stderr, without its `\n`.
    ///
    /// A last line without a newline is delivered at end of file; a line longer than
    /// `EventLoop.maximumLineLength` bytes arrives in pieces of at most that length.
    func child(_ token: ChildToken, printed line: [UInt8])

    /// The child has exited and been reaped, and its output reached end of file (so all lines came first).
    ///
    /// End of file needs every process holding the pipe to finish: a background grandchild keeps it open.
    func child(_ token: ChildToken, exited status: TerminationStatus)

    /// The loop could not watch the child (`epoll_ctl` or `waitid` failed); it has signalled the child's
    /// group with SIGKILL, and no other event follows.
    func child(_ token: ChildToken, failed error: SystemError)
}

/// A `ChildEventHandler` made of closures, each called on the loop thread (see `ChildEventHandler`).
public struct ChildCallbacks: ChildEventHandler {
    private let printed: @Sendable (ChildToken, [UInt8]) -> Void
    private let exited: @Sendable (ChildToken, Result<TerminationStatus, SystemError>) -> Void

    /// Calls `printed` per line and `finished` once at the end, with the status or the watching failure.
    public init(
        printed: @escaping @Sendable (ChildToken, [UInt8]) -> Void,
        finished: @escaping @Sendable (ChildToken, Result<TerminationStatus, SystemError>) -> Void
    ) {
        self.printed = printed
        self.exited = finished
    }

    /// Passes the line to `printed`.
    public func child(_ token: ChildToken, printed line: [UInt8]) { printed(token, line) }
    /// Passes the status to `finished`.
    public func child(_ token: ChildToken, exited status: TerminationStatus) { exited(token, .success(status)) }
    /// Passes the failure to `finished`.
    public func child(_ token: ChildToken, failed error: SystemError) { exited(token, .failure(error)) }
}
