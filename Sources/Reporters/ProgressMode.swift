import Execution
import PipelineModel

/// How a run shows its progress: `--progress auto|tty|plain|json` (contract: "The command line").
public enum ProgressMode: String, CaseIterable, Sendable {
    /// The live board on an interactive terminal, plain lines otherwise.
    case auto
    /// The live board; plain lines when the output cannot show it.
    case tty
    /// One line per transition.
    case plain
    /// One JSON object per transition.
    case json
}

/// The observer that shows a run's progress on `console` in `mode`.
///
/// The live board needs a terminal that understands cursor movement, so `tty` and `auto` both fall back to
/// plain lines when `console` is not a terminal or `TERM` is unset or `dumb`: escape sequences would only
/// garble a log file or a pipe.
/// - Parameters:
///   - environment: the process environment, for `TERM`.
///   - output: how the lines tasks print are shown (JSON carries them as events whatever it says).
///   - explains: lines say why each task runs or not (`run --explain`); JSON carries the reasons anyway.
///   - terminalTasks: tasks that use the terminal, for which the live board steps aside.
///   - handoff: what the board tells when it has stepped aside for one of them.
///   - resourceUse: what the live board shows of resources in use, for a pipeline that declares them.
public func makeProgressObserver(mode: ProgressMode, console: Console, environment: [String: String],
                                 output: OutputMode = .prefixed, explains: Bool = false,
                                 failures: WriteFailures? = nil, terminalTasks: Set<TaskID> = [],
                                 handoff: TerminalHandoff? = nil, resourceUse: ResourceUse? = nil) -> any RunObserver {
    switch mode {
    case .json:
        return JSONLinesReporter(sink: console, failures: failures)
    case .plain:
        return PlainLinesReporter(sink: console, output: output, explains: explains)
    case .auto, .tty:
        guard console.isInteractiveTerminal(environment: environment) else {
            return PlainLinesReporter(sink: console, output: output, explains: explains)
        }
        return TTYBoard(sink: console, terminalSize: { console.terminalSize() ?? .fallback }, output: output, explains: explains,
                        terminalTasks: terminalTasks, handoff: handoff, resourceUse: resourceUse)
    }
}
