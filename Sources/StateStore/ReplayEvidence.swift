/// What a run's up-to-date pre-pass learns about whether its verdict may be replayed by the next run
/// (`NoOpReplayRecord`), noted check by check.
struct ReplayEvidence: Sendable {
    /// `state_generation` as the checks read the tables.
    let generation: Int64
    /// Checks that found their task up to date.
    private(set) var upToDateTasks = 0
    /// False once a check found its task out of date, or depended on more than the status of paths it
    /// examined one by one: a pattern with wildcards, or a folder as input, whose files were listed.
    private(set) var isReplayable = true

    init(generation: Int64) {
        self.generation = generation
    }

    /// Notes one check's verdict.
    /// - Parameter namedOutright: whether the check kept `CheckedPaths`: every input one existing regular file
    ///   named outright, every output a path without wildcards.
    mutating func note(_ isUpToDate: Bool, namedOutright: Bool) {
        guard isReplayable else { return }
        if isUpToDate { upToDateTasks += 1 }
        if !isUpToDate || !namedOutright { isReplayable = false }
    }
}
