import Foundation
import Reporters
import StateStore

extension RunTimeline {
    /// Run `run` of the pipeline `file` (its number in `jobgraph history`, `nil` for the latest), read from
    /// the history in `directory`; `nil` when there is no such run, or no history at all.
    public static func read(pipelineFile file: String, in directory: String, run: Int64?) throws(PipelineRunError) -> RunTimeline? {
        guard FileManager.default.fileExists(atPath: StateStore.databasePath(inPipelineDirectory: directory)) else { return nil }
        return try Result { try StateStore.open(directory: directory).runTimeline(pipelineFile: file, run: run.map(RunID.init)) }
            .mapError { PipelineRunError.history(directory, $0) }.get()
    }

    /// The history's record as `jobgraph report`'s page shows it.
    public var runReport: RunReport {
        let counts = run.tasks
        return RunReport(
            pipeline: run.pipeline, run: run.id.description, startedAt: run.startedAt, wallTime: run.duration,
            outcome: run.outcome.rawValue, jobs: jobs,
            counts: [("succeeded", counts.succeeded), ("failed", counts.failed), ("up-to-date", counts.upToDate), ("restored", counts.restored),
                     ("skipped", counts.skipped), ("cancelled", counts.cancelled), ("unfinished", counts.unfinished)],
            attempts: attempts, criticalPath: criticalPath,
            finalStates: Dictionary(tasks.map { ($0.task, $0.state) }, uniquingKeysWith: { $1 }), resources: resources)
    }
}
