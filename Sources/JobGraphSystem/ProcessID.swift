import Glibc

/// A process id; for a child of `ProcessSpawner` it is also the id of the child's own process group.
public struct ProcessID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The C `pid_t`.
    public let rawValue: pid_t

    /// Wraps a C process id.
    public init(rawValue: pid_t) { self.rawValue = rawValue }

    /// The number, as `ps` shows it.
    public var description: String { String(rawValue) }

    /// Sends `signal` to every process in the group this id leads (`kill(-pgid, signal)`).
    ///
    /// Signalling a group reaches grandchildren too (`sh -c 'a & b'`), which is why every child gets its
    /// own group (swift-subprocess warns the same for its teardown). Safe from any thread.
    /// - Returns: `false` when the group no longer exists (`ESRCH`, not an error: it already ended).
    /// - Throws: `SystemError` from `kill` for anything else (such as `EPERM`).
    @discardableResult
    public func signalGroup(_ signal: ProcessSignal) throws(SystemError) -> Bool {
        // Called for every child that ends, whose group is then usually empty: the error's text is made
        // only for a real error (perf: building it for each ESRCH was 1.6% of a clean run's user time).
        while kill(-rawValue, signal.number) == -1 {
            let code = errno
            if code == EINTR { continue }
            if code == ESRCH { return false }
            throw SystemError("kill", errno: Errno(rawValue: code), subject: "process group \(rawValue)")
        }
        return true
    }

    /// Whether any process, zombies included, is still in the group this id leads.
    public var groupExists: Bool {
        kill(-rawValue, 0) == 0 || errno == EPERM
    }
}
