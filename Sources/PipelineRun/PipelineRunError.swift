import Foundation

/// Why a pipeline could not be run at all; nothing ran. The command line prints `lines` and exits 2.
public enum PipelineRunError: Error {
    /// `.jobgraph/` cannot be opened or another run holds its lock; the history cannot begin the run's
    /// record, or be read for a forecast (the dry run, `explain`); `--watch` cannot watch files at all.
    case state(any Error), record(any Error), forecast(any Error), watch(any Error)
    /// The history in a pipeline's folder cannot be read (`jobgraph report`, `history`).
    case history(String, any Error)
    /// Each reason the cluster cannot take the run.
    case slurm([String])

    /// What to tell the user, a line per problem, without `error: `.
    public var lines: [String] {
        switch self {
        case .state(let error): ["\(error)"]
        case .record(let error): ["cannot record the run in .jobgraph/state.db: \(error)"]
        case .forecast(let error): ["cannot read .jobgraph/state.db: \(error)"]
        case .history(let directory, let error): ["cannot read the history in \(directory)/.jobgraph: \(error)"]
        case .slurm(let problems): problems
        case .watch(let error): ["cannot watch files: \(error)"]
        }
    }
}
