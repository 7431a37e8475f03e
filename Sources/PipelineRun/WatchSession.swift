import Execution
import Foundation
import JobGraphSystem
import Reporters
import StateStore
import TaskGraph

/// `run --watch`: runs the selection, then waits for a change to its tasks' inputs or to the pipeline
/// file and runs it again, until Ctrl-C or SIGTERM.
///
/// Each rerun is the same selection through the normal up-to-date checks, so only what a change affects
/// executes. Folders are watched from before each run, so a change made while a task runs is seen; it is
/// acted on once the run has ended. An edit that breaks the pipeline prints its diagnostics and keeps
/// the last good pipeline watched, until a fix is saved.
public struct WatchSession {
    let session: PipelineSession
    /// The first run's configuration; an edited pipeline comes with its own (its resource totals).
    let configuration: RunConfiguration
    /// The pipeline file, as the user typed it.
    let file: String
    /// Loads and selects the pipeline again after an edit, with its diagnostics told, and gives it with the
    /// configuration to run it with; `nil` when it has errors.
    let reload: () -> (graph: TaskGraph, configuration: RunConfiguration)?
    /// Told the lines about watching (`WatchText`), and with `isWarning` a folder that cannot be watched.
    let say: (_ line: String, _ isWarning: Bool) -> Void

    public init(session: PipelineSession, configuration: RunConfiguration, file: String,
                reload: @escaping () -> (graph: TaskGraph, configuration: RunConfiguration)?,
                say: @escaping (_ line: String, _ isWarning: Bool) -> Void) {
        (self.session, self.configuration, self.file, self.reload, self.say) = (session, configuration, file, reload, say)
    }

    private enum Input: Sendable {
        case changes([FileWatcher.Change])
        case signal(ProcessSignal)
    }

    /// Runs and reruns `graph` through `runOnce` until a signal stops it.
    /// - Parameter runOnce: runs a graph once with a configuration (`PipelineRun.run`), and gives its summary
    ///   and exit status.
    /// - Returns: the exit status: 130 after SIGINT, 143 after SIGTERM, as for a run they stop.
    public func run(_ first: TaskGraph,
                    runOnce: (TaskGraph, RunConfiguration) async throws -> (summary: RunSummary, status: Int32)) async throws -> Int32 {
        let (inputs, continuation) = AsyncStream.makeStream(of: Input.self)
        session.control.whenIdle { signal in continuation.yield(.signal(signal)) }
        let watcher = try Result { try FileWatcher { changes in continuation.yield(.changes(changes)) } }.mapError(PipelineRunError.watch).get()
        defer {
            watcher.stop()
            continuation.finish()
        }
        let pipelineFile = URL(fileURLWithPath: file).standardizedFileURL.path
        var (graph, configuration) = (first, configuration)
        var pending = inputs.makeAsyncIterator()
        _ = session.control.takePendingStop()  // one from before the first run was ignored, as always
        while true {
            if let stop = session.control.takePendingStop() { return RunExitStatus.of(stop) }
            let watchSet = WatchSet(files: DeclaredFiles(graph: graph, configuration: configuration),
                                    pipelineFile: pipelineFile, stateDirectory: configuration.stateDirectory)
            watch(watchSet.folders, with: watcher)
            let finished = try await runOnce(graph, configuration)
            if finished.summary.stop != nil { return finished.status }
            say(WatchText.watching(folderCount: watcher.watchedFolders.count), false)
            waiting: while true {
                guard let input = await pending.next() else { return RunExitStatus.interrupted }
                switch input {
                case .signal(.interrupt): return RunExitStatus.interrupted
                case .signal(.terminate): return RunExitStatus.terminated
                case .signal: continue
                case .changes(let changes):
                    var changed: [String] = []
                    for change in changes where change.isDirectory && change.isCreation && watchSet.watchesNewFolder(change.path) {
                        watch(WatchSet.foldersBelow(change.path), with: watcher)
                        changed += watchSet.inputs(below: change.path)
                    }
                    if changes.contains(where: { $0.path == pipelineFile }) {
                        if let reloaded = reload() {
                            (graph, configuration) = reloaded
                            say(WatchText.reload(file), false)
                            break waiting
                        }
                        // The last good pipeline stays; an input changed in the same batch still runs it again.
                        say(WatchText.invalidEdit(file), false)
                    }
                    changed += changes.filter { !$0.isDirectory && watchSet.isInput($0.path) }.map(\.path)
                    guard !changed.isEmpty else { continue }
                    say(WatchText.rerun(after: Array(Set(changed.map(shown)))), false)
                    break waiting
                }
            }
        }
    }

    private func watch(_ folders: [String], with watcher: FileWatcher) {
        for folder in folders {
            do {
                try watcher.watch(folder: folder)
            } catch {
                // A folder removed since it was listed has nothing to watch; a full inotify table is worth saying.
                if (try? FileManager.default.attributesOfItem(atPath: folder)) != nil {
                    say("cannot watch '\(folder)': \(error)", true)
                }
            }
        }
    }

    /// A path as the user sees it: relative to the pipeline's folder when inside it.
    private func shown(_ path: String) -> String {
        let prefix = configuration.pipelineDirectory.hasSuffix("/") ? configuration.pipelineDirectory : configuration.pipelineDirectory + "/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
    }
}
