extension EventLoop {
    /// Reaps exited orphans (see `OrphanReaper`) every `interval` on the loop thread, until the loop stops;
    /// for a process that made itself a subreaper. Safe from any thread.
    ///
    /// No event announces an orphan's exit (SIGCHLD is not read, see `SignalSet.childExits`), so the
    /// loop looks: one `waitid` per look when nothing has exited. When an exited spawned child, not yet
    /// reaped through its pidfd, hides the orphans, `/proc` is read instead, at most once per
    /// `scanInterval`, since that read costs a system call per process on the machine.
    /// - Parameters:
    ///   - interval: the time between looks.
    ///   - scanInterval: the least time between two reads of `/proc`.
    public func reapOrphans(every interval: Duration = .milliseconds(100), scanInterval: Duration = .seconds(1)) {
        let look: @Sendable () -> Void = { [weak self] in
            self?.reapOrphansNow(every: interval, scanInterval: scanInterval, lastScan: 0)
        }
        if isCurrentThread { look() } else { post(look) }
    }

    private func reapOrphansNow(every interval: Duration, scanInterval: Duration, lastScan: UInt64) {
        var lastScan = lastScan
        if OrphanReaper.reapFirstExited().isBlocked {
            let now = Self.monotonicNanoseconds()
            if lastScan == 0 || now &- lastScan >= Self.nanoseconds(of: scanInterval) {
                OrphanReaper.reapByScan()
                lastScan = now
            }
        }
        schedule(after: interval) { [weak self, lastScan] in
            self?.reapOrphansNow(every: interval, scanInterval: scanInterval, lastScan: lastScan)
        }
    }
}
