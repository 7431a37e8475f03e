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
    let context: RunContext
    /// The pipeline file, as the user typed it.
    let file: String
    /// Loads and selects the pipeline again after an edit, with its diagnostics told; `nil` when it has errors.
    let reload: () -> TaskGraph?

    public init(context: RunContext, file: String, reload: @escaping () -> TaskGraph?) {
        (self.context, self.file, self.reload) = (context, file, reload)
    }

    private enum Input: Sendable {
        case changes([FileWatcher.Change])
        case signal(ProcessSignal)
    }

    /// Runs and reruns `graph` until a signal stops it.
    /// - Returns: the exit status: 130 after SIGINT, 143 after SIGTERM, as for a run they stop.
    public func run(_ first: TaskGraph) async throws -> Int32 {
        let (inputs, continuation) = AsyncStream.makeStream(of: Input.self)
        context.control.whenIdle { signal in continuation.yield(.signal(signal)) }
        let watcher: FileWatcher
        do {
            watcher = try FileWatcher { changes in continuation.yield(.changes(changes)) }
        } catch {
            Console.standardError.write(line: "error: cannot watch files: \(error)")
            throw ReportedFailure()
        }
        defer {
            watcher.stop()
            continuation.finish()
        }
        let pipelineFile = URL(fileURLWithPath: file).standardizedFileURL.path
        let console = context.messageConsole
        var graph = first
        var pending = inputs.makeAsyncIterator()
        _ = context.control.takePendingStop()  // one from before the first run was ignored, as always
        while true {
            switch context.control.takePendingStop() {
            case .interrupt?: return RunExitStatus.interrupted
            case .terminate?: return RunExitStatus.terminated
            case nil: break
            }
            let watchSet = WatchSet(files: DeclaredFiles(graph: graph, configuration: context.configuration),
                                    pipelineFile: pipelineFile, stateDirectory: context.configuration.stateDirectory)
            watch(watchSet.folders, with: watcher)
            let finished = try await context.runOnce(graph)
            if finished.summary.stop != nil { return finished.status }
            console.write(line: WatchText.watching(folderCount: watcher.watchedFolders.count))
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
                        guard let reloaded = reload() else {
                            console.write(line: WatchText.invalidEdit(file))
                            continue
                        }
                        graph = reloaded
                        console.write(line: WatchText.reload(file))
                        break waiting
                    }
                    changed += changes.filter { !$0.isDirectory && watchSet.isInput($0.path) }.map(\.path)
                    guard !changed.isEmpty else { continue }
                    console.write(line: WatchText.rerun(after: Array(Set(changed.map(shown)))))
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
                    Console.standardError.write(line: "warning: cannot watch '\(folder)': \(error)")
                }
            }
        }
    }

    /// A path as the user sees it: relative to the pipeline's folder when inside it.
    private func shown(_ path: String) -> String {
        let prefix = context.pipelineDirectory.hasSuffix("/") ? context.pipelineDirectory : context.pipelineDirectory + "/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
    }
}
