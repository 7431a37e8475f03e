import Glibc

/// A child the loop watches; a class so a slot's state can be updated in place while handlers, which may
/// register more children and grow the table, are running. Loop thread only.
final class WatchedChild {
    let token: ChildToken
    let handler: any ChildEventHandler
    let process: ProcessID
    let slot: Int
    let generation: UInt32
    var output: FileDescriptor?
    var exitDescriptor: FileDescriptor?
    /// The write end of `output` this process holds until the child exits (`ProcessSpawner.holdsOutputOpen`).
    var heldOutput: FileDescriptor?
    var status: TerminationStatus?
    var partialLine: [UInt8] = []

    init(_ child: ChildProcess, token: ChildToken, handler: any ChildEventHandler, slot: Int, generation: UInt32) {
        self.token = token
        self.handler = handler
        self.process = child.id
        self.slot = slot
        self.generation = generation
        self.output = child.output
        self.exitDescriptor = child.exitDescriptor
        self.heldOutput = child.heldOutput
    }
}

extension EventLoop {
    /// Starts watching `child`, taking ownership of its descriptors; safe from any thread.
    ///
    /// `handler` then receives, on the loop thread, each line the child prints and finally its exit (see
    /// `ChildEventHandler`). If the loop has already stopped, the child's group is killed and reaped and
    /// `handler` gets `failed` (`ECANCELED`) on the calling thread.
    /// - Parameters:
    ///   - child: a child from `ProcessSpawner`, not watched before.
    ///   - token: the caller's name for the child, passed back with every event.
    ///   - handler: receives the events.
    public func watch(_ child: ChildProcess, token: ChildToken, handler: some ChildEventHandler) {
        let handler: any ChildEventHandler = handler
        if isCurrentThread {
            register(child, token: token, handler: handler)
        } else if !post({ [self] in register(child, token: token, handler: handler) }) {
            abandon(child, token: token, handler: handler, reason: SystemError("EventLoop.watch", errno: .canceled))
        }
    }

    func register(_ process: ChildProcess, token: ChildToken, handler: any ChildEventHandler) {
        guard isRunning else {
            abandon(process, token: token, handler: handler, reason: SystemError("EventLoop.watch", errno: .canceled))
            return
        }
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
        } else {
            slot = children.count
            children.append(nil)
        }
        nextGeneration = (nextGeneration &+ 1) & 0xFF_FFFF
        let child = WatchedChild(process, token: token, handler: handler, slot: slot, generation: nextGeneration)
        children[slot] = child
        do throws(SystemError) {
            try Self.add(process.output, data: Self.eventData(.output, slot: slot, generation: child.generation),
                         to: epoll, using: epollControl)
            try Self.add(process.exitDescriptor, data: Self.eventData(.exit, slot: slot, generation: child.generation),
                         to: epoll, using: epollControl)
        } catch {
            abandon(child, reason: error)
        }
    }

    /// The watched child an event names, unless that child is gone and its slot reused.
    private func child(slot: Int, generation: UInt32) -> WatchedChild? {
        guard slot < children.count, let child = children[slot], child.generation == generation else { return nil }
        return child
    }

    func readOutput(slot: Int, generation: UInt32) {
        guard let child = child(slot: slot, generation: generation), let output = child.output,
              readOnce(output, of: child) == .endOfFile else { return }
        if child.status == nil {
            // Only where this process does not hold the pipe open (`ProcessSpawner.holdsOutputOpen`, which a
            // run's tasks have): a child closes its descriptors before the kernel marks it exited, so the
            // pidfd's event usually comes a moment after this one. Reaping now, when the child has already
            // exited, ends it on this wake-up instead of a second.
            reap(slot: slot, generation: generation)
        } else {
            finishIfDone(child)
        }
    }

    /// What one read of a child's output found.
    enum OutputRead {
        /// Bytes, delivered as lines; there may be more.
        case data
        /// Nothing for now.
        case empty
        /// End of file: the rest is delivered and the pipe closed.
        case endOfFile
    }

    /// Reads what the pipe holds, once, and delivers each complete line; at end of file (or an error a pipe
    /// cannot really report, treated alike) delivers the unfinished line too and closes the pipe.
    private func readOnce(_ output: FileDescriptor, of child: WatchedChild) -> OutputRead {
        let count = read(output.rawValue, readBuffer, Self.readBufferSize)
        if count == -1 && errno == EINTR { return .data }
        if count == -1 && errno == EAGAIN { return .empty }
        guard count > 0 else {
            if !child.partialLine.isEmpty { deliver(child.partialLine, of: child) }
            child.partialLine = []
            closeWatched(output)
            child.output = nil
            return .endOfFile
        }

        var start = 0
        while start < count, let newline = memchr(readBuffer + start, 0x0A, count - start) {
            let end = readBuffer.distance(to: newline)
            let piece = UnsafeRawBufferPointer(start: readBuffer + start, count: end - start)
            if child.partialLine.isEmpty {
                deliver(Array(piece), of: child)
            } else {
                child.partialLine.append(contentsOf: piece)
                deliverLongPieces(of: child)
                let line = child.partialLine
                child.partialLine = []
                deliver(line, of: child)
            }
            start = end + 1
        }
        if start < count {
            child.partialLine.append(contentsOf: UnsafeRawBufferPointer(start: readBuffer + start, count: count - start))
            deliverLongPieces(of: child)
        }
        return .data
    }

    /// Delivers full `maximumLineLength` pieces of an overlong pending line.
    private func deliverLongPieces(of child: WatchedChild) {
        while child.partialLine.count > Self.maximumLineLength {
            deliver(Array(child.partialLine.prefix(Self.maximumLineLength)), of: child)
            child.partialLine.removeFirst(Self.maximumLineLength)
        }
    }

    private func deliver(_ line: [UInt8], of child: WatchedChild) {
        child.handler.child(child.token, printed: line)
    }

    func reap(slot: Int, generation: UInt32) {
        guard let child = child(slot: slot, generation: generation), let exitDescriptor = child.exitDescriptor
        else { return }
        var info = siginfo_t()
        let result = waitid(P_PIDFD, id_t(exitDescriptor.rawValue), &info, WEXITED | WNOHANG)
        if result == -1 {
            if errno == EINTR || errno == EAGAIN { return }
            // ECHILD: something else in this process reaped it (a `waitpid(-1)` or SIGCHLD set to SIG_IGN).
            abandon(child, reason: SystemError("waitid", errno: .current, subject: "process \(child.process)"))
            return
        }
        // With WNOHANG, a child that has not exited yet leaves the zeroed `siginfo_t` alone.
        guard info._sifields._sigchld.si_pid != 0 else { return }
        child.status = Self.exitStatus(from: info)
        closeWatched(exitDescriptor)
        child.exitDescriptor = nil
        leaderExited(child.process)
        if let held = child.heldOutput {
            // All the child printed is in the pipe now. Read to its end here, on the exit's wake-up; a pipe
            // still open after that is held by a descendant, and its end of file comes as an event of its own.
            // (A few reads at most: a descendant that keeps writing is read as its events come, like any child.)
            held.closeIgnoringErrors()
            child.heldOutput = nil
            var reads = 0
            while reads < 16, let output = child.output, readOnce(output, of: child) == .data { reads += 1 }
        }
        finishIfDone(child)
    }

    static func exitStatus(from info: siginfo_t) -> TerminationStatus {
        let status = info._sifields._sigchld.si_status
        switch Int(info.si_code) {
        case Int(CLD_KILLED): return .signalled(signal: status, coreDumped: false)
        case Int(CLD_DUMPED): return .signalled(signal: status, coreDumped: true)
        default: return .exited(code: status)
        }
    }

    /// Closes a child's pipe or pidfd, which also takes it out of the epoll set: the loop holds the only
    /// descriptor of its file, so no `EPOLL_CTL_DEL` is needed (two system calls a task). A child spawned
    /// at that moment holds a copy only until its exec; an event the copy lets through names this child's
    /// slot and generation, which no longer match.
    private func closeWatched(_ descriptor: FileDescriptor) {
        descriptor.closeIgnoringErrors()
    }

    /// Delivers the exit once the process is reaped and its output is at end of file, whichever came last.
    private func finishIfDone(_ child: WatchedChild) {
        guard child.output == nil, let status = child.status else { return }
        release(child)
        child.handler.child(child.token, exited: status)
    }

    /// Frees the child's slot; an event still queued for it finds a newer generation or an empty slot.
    private func release(_ child: WatchedChild) {
        if child.slot < children.count, children[child.slot] === child {
            children[child.slot] = nil
            freeSlots.append(child.slot)
        }
    }

    /// Gives up on a watched child: kill its group, reap it, close everything, report `failed`.
    func abandon(_ child: WatchedChild, reason: SystemError) {
        release(child)
        if let output = child.output { closeWatched(output) }
        child.output = nil
        child.heldOutput?.closeIgnoringErrors()
        child.heldOutput = nil
        if let exitDescriptor = child.exitDescriptor {
            closeWatched(exitDescriptor)
            child.exitDescriptor = nil
            Self.killAndReap(child.process)
        }
        child.handler.child(child.token, failed: reason)
    }

    /// The same for a child that was never registered.
    func abandon(_ process: ChildProcess, token: ChildToken, handler: any ChildEventHandler, reason: SystemError) {
        process.closeDescriptors()
        Self.killAndReap(process.id)
        handler.child(token, failed: reason)
    }

    /// SIGKILL to the group, then a blocking reap of the leader, which a SIGKILL ends promptly.
    private static func killAndReap(_ process: ProcessID) {
        // Failure means the group is already gone (ESRCH); the reap below still collects the leader.
        _ = try? process.signalGroup(.kill)
        var status: CInt = 0
        // ECHILD (already reaped elsewhere) ends the loop as well as success does.
        while waitpid(process.rawValue, &status, 0) == -1 && errno == EINTR {}
    }
}
