import Glibc

/// An open file descriptor; a plain number, so whoever the documentation names as owner must close it.
public struct FileDescriptor: RawRepresentable, Hashable, Sendable {
    /// The C descriptor number.
    public let rawValue: CInt

    /// Wraps an open descriptor number; takes no ownership by itself.
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// Closes the descriptor.
    ///
    /// Not retried on `EINTR`: Linux has released the number by then, and a retry could close a
    /// descriptor another thread just opened.
    /// - Throws: `SystemError` from `close` (the number is released even then).
    public func close() throws(SystemError) {
        _ = try sys("close", retryingInterrupts: false) { Glibc.close(rawValue) }
    }

    /// Closes on a path where no one could act on a failure (error unwinding, teardown of a finished child).
    func closeIgnoringErrors() {
        // The only failures are EBADF (a bug elsewhere, nothing to undo) and EINTR/EIO after the number is
        // already released; there is no caller that could do better with them.
        _ = Glibc.close(rawValue)
    }

    /// Reads up to `buffer.count` bytes; 0 means end of file.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        try sys("read") { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Makes `O_NONBLOCK` the descriptor's only status flag, for a descriptor that has no other (a new
    /// pipe's end), without a system call to read the flags first.
    func setOnlyNonBlocking() throws(SystemError) {
        _ = try sys("fcntl") { fcntl(rawValue, F_SETFL, O_NONBLOCK) }
    }

    /// A new pipe, both ends close-on-exec from the start (`pipe2`), so no concurrently spawned child can
    /// inherit either end.
    static func makePipe() throws(SystemError) -> (readEnd: FileDescriptor, writeEnd: FileDescriptor) {
        let pipe2 = try LinuxCalls.require(LinuxCalls.pipe2, "pipe2")
        var ends: (CInt, CInt) = (-1, -1)
        _ = try withUnsafeMutableBytes(of: &ends) { (raw) throws(SystemError) -> CInt in
            let pointer = raw.baseAddress?.assumingMemoryBound(to: CInt.self)
            return try sys("pipe2") { pipe2(pointer, O_CLOEXEC) }
        }
        return (FileDescriptor(rawValue: ends.0), FileDescriptor(rawValue: ends.1))
    }
}
