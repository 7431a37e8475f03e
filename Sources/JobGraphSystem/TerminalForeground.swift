import Glibc

/// The terminal this process has in the foreground, lent to an interactive task's process group for as
/// long as it runs and taken back after, as a shell does for its foreground job.
public enum TerminalForeground {
    /// The first of descriptors 0–2 that is a terminal whose foreground process group is this process's
    /// own; `nil` when there is none (no terminal, or jobgraph runs in the background).
    public static func descriptor() -> CInt? {
        (0...2).first { isatty($0) == 1 && tcgetpgrp($0) == getpgrp() }
    }

    /// Gives the terminal's foreground back to this process's group, once the task's group has ended.
    ///
    /// The calling thread blocks SIGTTOU for the call: as a background group, this process would
    /// otherwise be stopped by the terminal for asking. Safe from any thread.
    public static func reclaim(_ descriptor: CInt) {
        var blocked = sigset_t(), previous = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTTOU)
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        // Best effort: a terminal that went away (a closed window) has no foreground to give back.
        _ = tcsetpgrp(descriptor, getpgrp())
        pthread_sigmask(SIG_SETMASK, &previous, nil)
    }
}
