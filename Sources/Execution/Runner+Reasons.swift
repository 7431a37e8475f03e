import PipelineModel

/// The reason a run's events carry (issue 13): the same answer the dry run gives.
extension Runner {
    /// What is known before the run of why each graph node runs: the pre-pass's reasons, or under
    /// `--force` that it is forced; empty without a history (nothing is checked, nothing remembered).
    func forecast(from prepass: UpToDatePrepass?, tasks: [RunTask]) -> [RunReason] {
        if let prepass { return prepass.reasons }
        guard configuration.force else { return [] }
        return UpToDatePrepass.forcedReasons(graph: graph, tasks: Array(tasks.prefix(graph.nodes.count)))
    }

    /// The reason a transition carries: why the task starts, on `ready -> executing`; `up-to-date` on the
    /// way there. A task checked only at its start learnt its answer after its start's event, so its end
    /// carries that answer (`executing -> succeeded  (input 'a.txt' changed)`).
    func reason(_ index: Int, from: TaskState, to: TaskState, in book: RunBook) -> String? {
        let forecast = index < book.forecast.count ? book.forecast[index] : nil
        if to == .upToDate { return (book.answerCause(index) ?? .upToDate).description }
        if to == .restored, let key = book.cacheKeys[index] {
            return "cache hit \(key.prefix(8))" + (book.operations[index]?.restoredFrom.map { " (\($0))" } ?? "")
        }
        if from == .ready && to == .executing {
            if configuration.force { return (forecast ?? .forced).description }
            return (book.answerCause(index) ?? forecast)?.description
        }
        if from == .executing, to.isTerminal, forecast?.decision != .runs, let cause = book.answerCause(index) {
            return configuration.force ? RunReason.forced.description : cause.description
        }
        return nil
    }
}
