import Glibc
import JobGraphBasics

/// A short command run to its end, its standard output and standard error captured apart: a Slurm client
/// whose answer is read whole, a `vars: {sh:}` command. Blocks the calling thread. The command runs in a
/// process group of its own, as every child of the spawner does: a Ctrl-C at the terminal reaches
/// jobgraph, not it, and `stoppedBy` is how the caller has it stopped then.
///
/// Not Foundation's `Process`: its `run()` lists `/proc/self/fd` and reads up to 256 bytes past each
/// entry, which crashed the test process once it held about 1,900 descriptors (`2a2b3c6`; swift-corelibs-
/// foundation pull request 5472), and a run holds a pipe, a pidfd and a log per running task.
public struct CapturedRun: Sendable {
    public var status: TerminationStatus
    public var standardOutput: [UInt8]
    public var standardError: [UInt8]
    /// One of the `stoppedBy` signals came, and the command's process group was killed.
    public var wasStopped = false

    /// Starts `configuration` with `spawner` (its `errors` is set here), reads both outputs to their end,
    /// then reaps the child. A descendant that keeps an output open keeps this waiting, as a shell's `$(…)` does.
    /// - Parameter signals: signals this process blocks; once one is pending, the command's process group is
    ///   killed. The signal is left pending, for the caller to act on (a run's loop, `sigpending`).
    /// - Throws: `SystemError` when the command cannot be started or watched.
    public static func run(_ configuration: SpawnConfiguration, spawner: ProcessSpawner = ProcessSpawner(),
                           stoppedBy signals: SignalSet = []) throws(SystemError) -> CapturedRun {
        // Only polled, never read: the signal stays pending. Made first, so a failure leaves no child behind.
        let stopSignals = signals.signals.isEmpty ? nil : try signals.descriptor()
        defer { stopSignals?.closeIgnoringErrors() }
        var spawner = spawner
        spawner.holdsOutputOpen = false
        let errorPipe = try FileDescriptor.makePipe()
        let child: ChildProcess
        do throws(SystemError) {
            var configuration = configuration
            configuration.errors = try errorPipe.writeEnd.numberedAboveStandardDescriptors()
            defer { configuration.errors?.closeIgnoringErrors() }
            // Written down as it starts, under the set's lock: a signal's default action, which ends the
            // commands it finds there (`killEveryRunningCommand`), cannot come between the two and miss it.
            child = try running.withLock { running throws(SystemError) in
                let child = try spawner.spawn(configuration)
                running.insert(child.id)
                return child
            }
        } catch {
            errorPipe.readEnd.closeIgnoringErrors()
            throw error
        }
        defer {
            child.closeDescriptors()
            errorPipe.readEnd.closeIgnoringErrors()
        }
        var run = CapturedRun(status: .exited(code: 0), standardOutput: [], standardError: [])
        (run.standardOutput, run.standardError, run.wasStopped) = readToEnd(child.output, errorPipe.readEnd, stoppingAt: stopSignals) {
            _ = try? child.id.signalGroup(.kill)  // a group that has just ended needs no signal
        }
        // Taken out before the child is reaped, so no group named here can be another's by then.
        running.withLock { _ = $0.remove(child.id) }
        var info = siginfo_t()
        while waitid(P_PIDFD, id_t(child.exitDescriptor.rawValue), &info, WEXITED) == -1 {
            guard errno == EINTR else { throw SystemError("waitid", errno: .current, subject: configuration.executablePath) }
        }
        run.status = EventLoop.exitStatus(from: info)
        return run
    }

    /// The process groups of the commands running now.
    private static let running = Locked<Set<ProcessID>>([])

    /// Kills the process group of every command running now: for a signal's default action, which ends
    /// jobgraph at once (`_exit`) and would leave a command it was waiting for to run on.
    public static func killEveryRunningCommand() {
        for group in running.withLock({ $0 }) { _ = try? group.signalGroup(.kill) }
    }

    /// Everything written to `first` and `second` until both reach their end, read as it comes, so that
    /// neither pipe fills while the other is read; `stop` is called once if `signals` becomes readable.
    private static func readToEnd(_ first: FileDescriptor, _ second: FileDescriptor, stoppingAt signals: FileDescriptor?,
                                  stop: () -> Void) -> ([UInt8], [UInt8], Bool) {
        var captured: [[UInt8]] = [[], []]
        var watched = [pollfd(fd: first.rawValue, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: second.rawValue, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: signals?.rawValue ?? -1, events: Int16(POLLIN), revents: 0)]
        var stopped = false
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while watched[0].fd >= 0 || watched[1].fd >= 0 {
            if poll(&watched, nfds_t(watched.count), -1) < 0 {
                // A signal: the flags are the last call's, so look again. Else a bad request or no memory:
                // what was read so far is the answer.
                if errno == EINTR { continue } else { break }
            }
            if watched[2].fd >= 0 && watched[2].revents != 0 {
                watched[2].fd = -1
                stopped = true
                stop()
            }
            for index in 0..<2 where watched[index].fd >= 0 && watched[index].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(watched[index].fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    captured[index] += buffer[..<count]
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    watched[index].fd = -1  // poll skips a negative descriptor
                }
            }
        }
        return (captured[0], captured[1], stopped)
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
