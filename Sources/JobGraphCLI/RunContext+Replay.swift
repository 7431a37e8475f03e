import Execution
import Foundation
import JobGraphBasics
import PipelineModel
import Reporters
import StateStore
import YAMLNodes

/// A run that replays a recorded no-op verdict (`NoOpReplay`), with the run lock, the reaper, the history
/// and the summary of any other run.
extension RunContext {
    /// Replays `record`: its events to the same observers a run has (but the attempts' recorder: the
    /// replayed run shares the task rows and attempts of the run it repeats).
    /// - Returns: `nil` when the history of the run to repeat is gone; nothing was written then.
    func replay(_ record: NoOpReplayRecord) -> FinishedRun? {
        let configuration = self.configuration
        let startTime = Date()
        let run: RunID
        do {
            guard let begun = try state.store.beginReplayedRun(record, startTime: startTime, jobs: configuration.jobs) else { return nil }
            run = begun
        } catch {
            return nil  // the normal path then says what is wrong with the store
        }
        let writeFailures = WriteFailures { failure in Console.standardError.write(line: "warning: \(failure)") }
        Console.standardOutput.reportFailures(to: writeFailures)
        Console.standardError.reportFailures(to: writeFailures)
        // A replay never explains (`--explain` rules it out), so the observer is the run's own.
        var observers: [any RunObserver] = [progressObserver(fileOutput: record.outputMode.flatMap(OutputMode.init(rawValue:)))]
        if let events = Self.eventsObserver(path: eventsPath, failures: writeFailures) { observers.append(events) }
        let result = NoOpReplay(pipelineFile: record.pipelineFile, jobs: configuration.jobs, tasks: record.tasks,
                                criticalPath: record.criticalPath).run { batch in
            for observer in observers { observer.observe(batch: batch) }
        }
        for observer in observers { observer.close() }
        // No process to stop: a replay starts none.
        do {
            try state.store.finishRun(run, outcome: RunOutcome(summary: result), endTime: Date())
        } catch {
            Console.standardError.write(line: "warning: cannot record the end of the run in .jobgraph/state.db: \(error)")
        }
        messageConsole.write(lines: SummaryPrinter().render(result, writeFailures: writeFailures.all))
        return FinishedRun(summary: result, status: ExitStatus.of(result, writeFailures: writeFailures))
    }

    /// The `--events FILE` writer of a run, appending; `nil` (with a warning) when it cannot be opened.
    static func eventsObserver(path eventsPath: String?, failures: WriteFailures) -> (any RunObserver)? {
        guard let eventsPath else { return nil }
        do {
            return try JSONLinesReporter(path: eventsPath, appending: true, failures: failures)
        } catch {
            Console.standardError.write(line: "warning: this run's events are not written: \(error)")
            return nil
        }
    }
}

extension RunContext {
    /// After a run: records its verdict for a replay when `replay` allows one, else forgets any record.
    func keepReplay(_ replay: NoOpReplayAttempt?, after recorder: RunRecorder, pipelineFile: String, eligible: Bool,
                    build: @autoclosure () -> NoOpReplay?, outputMode: OutputMode?, content: YAMLContentDigest?) {
        do {
            if let replay {
                try replay.keep(after: recorder, in: state.store, eligible: eligible, build: build,
                                outputMode: outputMode, content: content)
            } else {
                try state.store.forgetReplay(pipelineFile: pipelineFile)
            }
        } catch {
            Console.standardError.write(line: "warning: cannot record the run's verdict for the next run in .jobgraph/state.db: \(error)")
        }
    }
}
