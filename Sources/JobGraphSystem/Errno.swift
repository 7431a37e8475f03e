import Glibc

/// A POSIX error number, as `errno` or a `posix_*` call reports it.
///
/// The named constants cover the codes process and descriptor calls report; any other code is kept
/// as its raw value, so no error is lost.
public struct Errno: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The C value, such as `ENOENT`.
    public let rawValue: CInt

    /// Wraps a C error number.
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// The calling thread's current `errno`.
    static var current: Errno { Errno(rawValue: errno) }

    /// glibc's message for the code ("No such file or directory"); glibc's `strerror` has been thread-safe
    /// since 2.32 for known codes, and glibc formats unknown ones into a thread-local buffer.
    public var description: String { String(cString: strerror(rawValue)) }

    /// `EPERM`: the caller lacks the privilege.
    public static let notPermitted = Errno(rawValue: EPERM)
    /// `ENOENT`: the path or program does not exist.
    public static let noSuchFileOrDirectory = Errno(rawValue: ENOENT)
    /// `ESRCH`: no such process or process group.
    public static let noSuchProcess = Errno(rawValue: ESRCH)
    /// `EINTR`: a signal interrupted the call.
    public static let interrupted = Errno(rawValue: EINTR)
    /// `EIO`: a low-level input or output error.
    public static let ioError = Errno(rawValue: EIO)
    /// `E2BIG`: the argument list and environment are too long.
    public static let argumentListTooLong = Errno(rawValue: E2BIG)
    /// `ENOEXEC`: the file is not in an executable format (and has no `#!` line).
    public static let notExecutableFormat = Errno(rawValue: ENOEXEC)
    /// `EBADF`: not an open descriptor.
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    /// `ECHILD`: no such child to wait for (someone else reaped it).
    public static let noChildProcess = Errno(rawValue: ECHILD)
    /// `EAGAIN`: the call would block on a non-blocking descriptor.
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    /// `ENOMEM`: the kernel is out of memory.
    public static let noMemory = Errno(rawValue: ENOMEM)
    /// `EACCES`: permission denied (not executable, or a directory on the way is not searchable).
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// `EEXIST`: the file already exists.
    public static let fileExists = Errno(rawValue: EEXIST)
    /// `ENOTDIR`: a component of the path is not a directory.
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    /// `EISDIR`: the path is a directory.
    public static let isDirectory = Errno(rawValue: EISDIR)
    /// `EINVAL`: an invalid argument (a NUL byte inside an argument, say).
    public static let invalidArgument = Errno(rawValue: EINVAL)
    /// `ENFILE`: the system's table of open files is full.
    public static let tooManyOpenFilesInSystem = Errno(rawValue: ENFILE)
    /// `EMFILE`: this process has as many descriptors open as its limit allows.
    public static let tooManyOpenFiles = Errno(rawValue: EMFILE)
    /// `ETXTBSY`: the executable is open for writing.
    public static let textFileBusy = Errno(rawValue: ETXTBSY)
    /// `ENOSPC`: no space left (or, for epoll, too many watched descriptors).
    public static let noSpace = Errno(rawValue: ENOSPC)
    /// `EPIPE`: the reading end of a pipe is closed.
    public static let brokenPipe = Errno(rawValue: EPIPE)
    /// `ENAMETOOLONG`: the path is too long.
    public static let fileNameTooLong = Errno(rawValue: ENAMETOOLONG)
    /// `ENOSYS`: the kernel or C library lacks the call.
    public static let noFunction = Errno(rawValue: ENOSYS)
    /// `ECANCELED`: the operation was abandoned (an `EventLoop` stopped while watching a child).
    public static let canceled = Errno(rawValue: ECANCELED)
    /// `ELOOP`: too many symbolic links on the path.
    public static let tooManySymbolicLinks = Errno(rawValue: ELOOP)
}
