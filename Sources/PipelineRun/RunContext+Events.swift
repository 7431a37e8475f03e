import Execution
import Reporters

extension RunContext {
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
