/// A failed system call: which call, the error number, and what it was about.
///
/// Thrown (typed) by every wrapper in this module. The description reads like a C tool's message:
/// `posix_spawn '/usr/bin/tuch': No such file or directory`.
public struct SystemError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The C call that failed, such as `posix_spawn` or `epoll_ctl`.
    public var call: String
    /// Why it failed.
    public var errno: Errno
    /// The path or program the call was about, when there is one.
    public var subject: String?

    /// Describes a failure of `call` with `errno`, about `subject` if given.
    public init(_ call: String, errno: Errno, subject: String? = nil) {
        self.call = call
        self.errno = errno
        self.subject = subject
    }

    /// `call 'subject': message`, or `call: message` without a subject.
    public var description: String {
        if let subject { return "\(call) '\(subject)': \(errno)" }
        return "\(call): \(errno)"
    }
}
