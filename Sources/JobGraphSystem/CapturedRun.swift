import Glibc

/// A short command run to its end, its standard output and standard error captured apart: a Slurm client
/// whose answer is read whole, a `vars: {sh:}` command. Blocks the calling thread.
///
/// Not Foundation's `Process`: its `run()` lists `/proc/self/fd` and reads up to 256 bytes past each
/// entry, which crashed the test process once it held about 1,900 descriptors (`2a2b3c6`; swift-corelibs-
/// foundation pull request 5472), and a run holds a pipe, a pidfd and a log per running task.
public struct CapturedRun: Sendable {
    public var status: TerminationStatus
    public var standardOutput: [UInt8]
    public var standardError: [UInt8]

    /// Starts `configuration` with `spawner` (its `errors` is set here), reads both outputs to their end,
    /// then reaps the child. A descendant that keeps an output open keeps this waiting, as a shell's `$(…)` does.
    /// - Throws: `SystemError` when the command cannot be started or watched.
    public static func run(_ configuration: SpawnConfiguration, spawner: ProcessSpawner = ProcessSpawner()) throws(SystemError) -> CapturedRun {
        var spawner = spawner
        spawner.holdsOutputOpen = false
        let errorPipe = try FileDescriptor.makePipe()
        let child: ChildProcess
        do throws(SystemError) {
            var configuration = configuration
            configuration.errors = try errorPipe.writeEnd.numberedAboveStandardDescriptors()
            defer { configuration.errors?.closeIgnoringErrors() }
            child = try spawner.spawn(configuration)
        } catch {
            errorPipe.readEnd.closeIgnoringErrors()
            throw error
        }
        defer {
            child.closeDescriptors()
            errorPipe.readEnd.closeIgnoringErrors()
        }
        let (output, errors) = readToEnd(child.output, errorPipe.readEnd)
        var info = siginfo_t()
        while waitid(P_PIDFD, id_t(child.exitDescriptor.rawValue), &info, WEXITED) == -1 {
            guard errno == EINTR else { throw SystemError("waitid", errno: .current, subject: configuration.executablePath) }
        }
        return CapturedRun(status: EventLoop.exitStatus(from: info), standardOutput: output, standardError: errors)
    }

    /// Everything written to `first` and `second` until both reach their end, read as it comes, so that
    /// neither pipe fills while the other is read.
    private static func readToEnd(_ first: FileDescriptor, _ second: FileDescriptor) -> ([UInt8], [UInt8]) {
        var captured: [[UInt8]] = [[], []]
        var watched = [pollfd(fd: first.rawValue, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: second.rawValue, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while watched.contains(where: { $0.fd >= 0 }) {
            // Failing only for a bad request or no memory: what was read so far is the answer.
            guard poll(&watched, nfds_t(watched.count), -1) >= 0 || errno == EINTR else { break }
            for index in watched.indices where watched[index].fd >= 0 && watched[index].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(watched[index].fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    captured[index] += buffer[..<count]
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    watched[index].fd = -1  // poll skips a negative descriptor
                }
            }
        }
        return (captured[0], captured[1])
    }
}

extension FileDescriptor {
    /// This descriptor if it is numbered 3 or above, else a close-on-exec copy that is (this one closed): what
    /// a child's standard error is made from must not hold a number the child's output takes first.
    func numberedAboveStandardDescriptors() throws(SystemError) -> FileDescriptor {
        guard rawValue < 3 else { return self }
        defer { closeIgnoringErrors() }
        return FileDescriptor(rawValue: try sys("fcntl") { fcntl(rawValue, F_DUPFD_CLOEXEC, 3) })
    }
}
