/// A teardown under way for one process group. Loop thread only.
struct TeardownProgress {
    var remaining: ArraySlice<Teardown.Step>
    var stepTimer: TimerID?
    var recheckTimer: TimerID?
    var completions: [@Sendable () -> Void]
}

extension EventLoop {
    /// Stops the process group led by `group` as `teardown` describes, using the loop's timers; safe from any
    /// thread.
    ///
    /// Each step signals the group (and then sends SIGCONT, so a stopped member acts on it), then waits up
    /// to the step's grace; the group counts as gone once no process, zombies included, is left in it. After
    /// the last step the group gets SIGKILL. A new teardown of the same group replaces the remaining steps
    /// (a second Ctrl-C: `.kill`), and all completions are called.
    /// - Parameters:
    ///   - group: the id of a child from `ProcessSpawner` (it leads its own group).
    ///   - teardown: the steps before SIGKILL.
    ///   - completion: called on the loop thread once the group is gone or SIGKILL has been sent.
    public func tearDown(_ group: ProcessID, using teardown: Teardown, then completion: (@Sendable () -> Void)? = nil) {
        let begin: @Sendable () -> Void = { [self] in
            var progress = teardowns[group.rawValue]
                ?? TeardownProgress(remaining: [], stepTimer: nil, recheckTimer: nil, completions: [])
            if let timer = progress.stepTimer { cancel(timer) }
            progress.stepTimer = nil
            progress.remaining = teardown.steps[...]
            if let completion { progress.completions.append(completion) }
            teardowns[group.rawValue] = progress
            advanceTeardown(of: group)
        }
        if isCurrentThread {
            begin()
        } else if !post(begin) {
            // The loop has stopped and killed everything it watched; finish the job for an unwatched group.
            _ = try? group.signalGroup(.kill)
            completion?()
        }
    }

    private func advanceTeardown(of group: ProcessID) {
        guard var progress = teardowns[group.rawValue] else { return }
        progress.stepTimer = nil
        guard let step = progress.remaining.popFirst() else {
            // ESRCH is success here; EPERM cannot happen for our own children, and nothing more could be done.
            _ = try? group.signalGroup(.kill)
            finishTeardown(of: group)
            return
        }
        let exists: Bool
        do {
            exists = try group.signalGroup(step.signal)
            if exists, step.signal != .continue, step.signal != .kill {
                // Return value irrelevant: the group was just seen alive, and CONT only helps it act.
                _ = try? group.signalGroup(.continue)
            }
        } catch {
            exists = true   // EPERM: not ours to signal; let the grace run out and try the next step.
        }
        guard exists else {
            finishTeardown(of: group)
            return
        }
        progress.stepTimer = schedule(after: step.grace) { [self] in advanceTeardown(of: group) }
        teardowns[group.rawValue] = progress
    }

    /// Called when a watched child is reaped: if it leads a group being torn down, watch for the group to
    /// empty. Its orphans are reaped by init (or, in a subreaper, by us) a moment later, with no event to
    /// tell us, so look again after
    /// 1, 2, 4 … ms (at most 100 ms apart) until the group is gone or the current step's grace runs out.
    func leaderExited(_ group: ProcessID) {
        recheckTeardown(of: group, after: .milliseconds(1))
    }

    private func recheckTeardown(of group: ProcessID, after delay: Duration) {
        guard var progress = teardowns[group.rawValue] else { return }
        // In a subreaper, the group's orphans are ours to reap; until then they keep the group in existence.
        OrphanReaper.reapExited(inGroup: group)
        if !group.groupExists {
            finishTeardown(of: group)
            return
        }
        let next = min(delay * 2, .milliseconds(100))
        progress.recheckTimer = schedule(after: delay) { [self] in recheckTeardown(of: group, after: next) }
        teardowns[group.rawValue] = progress
    }

    private func finishTeardown(of group: ProcessID) {
        guard let progress = teardowns.removeValue(forKey: group.rawValue) else { return }
        if let timer = progress.stepTimer { cancel(timer) }
        if let timer = progress.recheckTimer { cancel(timer) }
        for completion in progress.completions { completion() }
    }
}
