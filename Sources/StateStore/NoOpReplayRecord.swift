#if canImport(Glibc)
import Glibc
#endif
import Execution
import JobGraphBasics
import PipelineModel

/// What a run that found every selected task up to date before it started leaves for the next run of the
/// same command, so that run may replay the verdict instead of reaching it again (docs/state.md).
///
/// The verdict is a pure function of what is recorded here: the command (`key`: jobgraph's version and
/// binary, the arguments that shape the graph, the working folder), the pipeline file (its length and
/// hash), the up-to-date tables of `state.db` (`generation`) and the status of every path the
/// checks examined. A replay is valid only while all of them are equal (`StateStore.validReplay`).
public struct NoOpReplayRecord: Sendable, Equatable {
    /// The command that made the verdict, encoded by `NoOpReplayRecord.key`; compared byte for byte.
    public var key: [UInt8]
    /// The pipeline file as the recorded run read it.
    public var pipeline: PipelineFileDigest
    /// `state_generation` when the recorded run read the up-to-date tables.
    public var generation: Int64
    /// The recorded run: a replay repeats its verdict and shares its task rows and attempts.
    public var sourceRun: RunID
    /// The pipeline file as the user typed it, as the run's events name it.
    public var pipelineFile: String
    /// The pipeline file's `output:` (an `OutputMode` raw value), which `--output` overrides.
    public var outputMode: String?
    /// Every path the checks examined, with what they found (`nil`: missing); `body` writes each folder's files together.
    var paths: [ExaminedPath]
    /// The tasks, in the order the recorded run ended them.
    public var tasks: [NoOpReplay.Task]
    public var criticalPath: [TaskID]

    /// A path's status as the up-to-date checks of the recorded run saw it.
    struct ExaminedPath: Sendable, Equatable {
        var path: String
        var status: FileStatus?
    }

    init(key: [UInt8], pipeline: PipelineFileDigest, generation: Int64, sourceRun: RunID, pipelineFile: String,
         outputMode: String?, paths: [ExaminedPath], tasks: [NoOpReplay.Task], criticalPath: [TaskID]) {
        self.outputMode = outputMode
        self.key = key
        self.pipeline = pipeline
        self.generation = generation
        self.sourceRun = sourceRun
        self.pipelineFile = pipelineFile
        self.paths = paths
        self.tasks = tasks
        self.criticalPath = criticalPath
    }

    /// The key of a command: each part's bytes, length first, so no two different commands encode alike.
    ///
    /// Not the caller's environment: no variable of it reaches a verdict that may be recorded. A task's
    /// definition holds only the variables the pipeline sets, with the values the pipeline gives them
    /// (`TaskDefinition.environment`), and a task with `conditions` (which may read the environment) keeps
    /// its run from being recorded. Keyed by the whole environment, a rerun from another shell (`OLDPWD`,
    /// `SHLVL`), under `time` (`_`) or in a new CI job checked every task to reach the same verdict.
    /// - Parameters:
    ///   - version: jobgraph's version, with whatever identifies its binary (a rebuilt one may decide otherwise).
    ///   - arguments: the pipeline file as typed, the selected tasks, `--var`s (sorted), the executor asked for.
    public static func key(version: String, workingDirectory: String, arguments: [String]) -> [UInt8] {
        var writer = ReplayBytesWriter()
        writer.append(Int64(StateSchema.currentVersion))
        writer.append(version)
        writer.append(workingDirectory)
        writer.append(strings: arguments)
        return writer.bytes
    }

    /// Whether every examined path still has the status the recorded run saw: the last, costliest check.
    /// - Parameter stop: see `ExaminedPathCheck.allUnchanged`.
    func pathsAreUnchanged(unlessStopped stop: Locked<Bool> = Locked(false)) -> Bool {
        ExaminedPathCheck.allUnchanged(paths, unlessStopped: stop)
    }

    /// What starts a `body` in the layout below; bytes without it are no body (a record of another layout).
    static let bodyFormat: [UInt8] = Array("jgr".utf8) + [2]

    /// `paths`, `tasks`, `pipelineFile` and `criticalPath`: the part read only once everything else matched.
    ///
    /// Integers and lengths compact, each folder written once before its files' names, and the queues and
    /// reasons, which most tasks share, written once in a table the tasks point into. Written with 8 bytes
    /// to an integer and each path whole, a record of 100,000 tasks took 12.9 MB, and replacing it in
    /// `state.db` 72 ms (Python's sqlite3 on a copy: 8,562 pages into the WAL, then a checkpoint of 3,162).
    var body: [UInt8] {
        let folders = Self.pathsByFolder(paths)
        var writer = ReplayBytesWriter(capacity: 64 + 24 * paths.count + 16 * tasks.count)
        writer.append(raw: Self.bodyFormat)
        writer.appendCompact(pipelineFile)
        if let outputMode { writer.appendCompact(1); writer.appendCompact(outputMode) } else { writer.appendCompact(0) }
        writer.appendCompact(UInt64(folders.count))
        for group in folders {
            writer.appendCompact(group.folder)
            writer.appendCompact(UInt64(group.positions.count))
            let nameStart = group.folder.utf8.count
            for index in group.positions {
                // The name after the folder, which the path shares with the group's first byte for byte.
                Self.withUTF8(of: paths[index].path) { writer.appendCompact(bytes: UnsafeBufferPointer(rebasing: $0[nameStart...])) }
                if let status = paths[index].status {
                    writer.appendCompact(UInt64(status.kind.rawValue) + 1)
                    writer.appendCompact(signed: status.size)
                    writer.appendCompact(signed: status.modificationNanoseconds)
                    writer.appendCompact(status.inode)
                } else {
                    writer.appendCompact(0)
                }
            }
        }
        // Each distinct queue and reason once; a task names them by their place (a reason's plus one, 0: none).
        var table: [String] = []
        var place: [String: UInt64] = [:]
        func placeOf(_ text: String) -> UInt64 {
            if let known = place[text] { return known }
            table.append(text)
            place[text] = UInt64(table.count - 1)
            return UInt64(table.count - 1)
        }
        var references: [(queue: UInt64, reason: UInt64)] = []
        references.reserveCapacity(tasks.count)
        var last: (queue: String, reason: String?, places: (UInt64, UInt64))?
        for task in tasks {
            // Most tasks repeat the one before: compared, not hashed.
            if let last, last.queue == task.queue, last.reason == task.reason {
                references.append(last.places)
                continue
            }
            let places = (placeOf(task.queue), task.reason.map { placeOf($0) + 1 } ?? 0)
            references.append(places)
            last = (task.queue, task.reason, places)
        }
        writer.appendCompact(strings: table)
        writer.appendCompact(UInt64(tasks.count))
        for index in tasks.indices {
            writer.appendCompact(tasks[index].id.rawValue)
            writer.appendCompact(references[index].queue)
            writer.appendCompact(references[index].reason)
        }
        writer.appendCompact(strings: criticalPath.map(\.rawValue))
        return writer.bytes
    }

    /// The folders of `paths` (each with its last `/`; "" for a bare name), in the order first met, each
    /// with the positions of its paths in order: a record keeps a folder's files together for
    /// `ExaminedPathCheck`, and writes the folder once.
    static func pathsByFolder(_ paths: [ExaminedPath]) -> [(folder: String, positions: [Int])] {
        var groups: [(folder: String, positions: [Int])] = []
        var groupOfFolder: [String: Int] = [:]
        var lastGroup = -1
        for index in paths.indices {
            // The checks meet most paths next to others of their folder: its bytes are compared with the
            // last folder's, and hashed only when they differ (a `Substring` per path and a backward walk of
            // its view were 24 ms of 100,000 paths, perf).
            let group: Int? = withUTF8(of: paths[index].path) { path in
                var length = path.count
                while length > 0, path[length - 1] != UInt8(ascii: "/") { length -= 1 }
                if lastGroup >= 0, withUTF8(of: groups[lastGroup].folder, { folder in
                    folder.count == length && (length == 0 || memcmp(folder.baseAddress!, path.baseAddress!, length) == 0)
                }) {
                    return lastGroup
                }
                let folder = String(decoding: UnsafeBufferPointer(rebasing: path[..<length]), as: UTF8.self)
                if let known = groupOfFolder[folder] { return known }
                groupOfFolder[folder] = groups.count
                groups.append((folder, []))
                return groups.count - 1
            }
            lastGroup = group ?? lastGroup
            groups[lastGroup].positions.append(index)
        }
        return groups
    }

    /// `body(text's UTF-8)`, from its contiguous storage (a native string's is; another is copied once).
    private static func withUTF8<Result>(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = text
        return copy.withUTF8(body)
    }

    /// Decodes `body`; `nil` for bytes it did not write.
    static func decodeBody(_ bytes: UnsafeRawBufferPointer)
        -> (pipelineFile: String, outputMode: String?, paths: [ExaminedPath], tasks: [NoOpReplay.Task], criticalPath: [TaskID])? {
        var reader = ReplayBytesReader(bytes)
        guard reader.skip(bodyFormat), let pipelineFile = reader.compactString(), let hasOutputMode = reader.compactInteger(),
              hasOutputMode <= 1 else { return nil }
        var outputMode: String?
        if hasOutputMode == 1 {
            guard let mode = reader.compactString() else { return nil }
            outputMode = mode
        }
        guard let folderCount = reader.compactCount() else { return nil }
        var paths: [ExaminedPath] = []
        for _ in 0..<folderCount {
            guard let folder = reader.compactString(), let count = reader.compactCount() else { return nil }
            paths.reserveCapacity(paths.count + count)
            for _ in 0..<count {
                guard let name = reader.compactString(), let code = reader.compactInteger() else { return nil }
                if code == 0 { paths.append(ExaminedPath(path: folder + name, status: nil)); continue }
                guard let kind = FileStatus.Kind(rawValue: Int64(truncatingIfNeeded: code &- 1)), let size = reader.compactSigned(),
                      let modified = reader.compactSigned(), let inode = reader.compactInteger() else { return nil }
                paths.append(ExaminedPath(path: folder + name, status: FileStatus(kind: kind, size: size, modificationNanoseconds: modified,
                                                                                 inode: inode)))
            }
        }
        guard let table = reader.compactStrings(), let taskCount = reader.compactCount() else { return nil }
        var tasks: [NoOpReplay.Task] = []
        tasks.reserveCapacity(taskCount)
        for _ in 0..<taskCount {
            guard let id = reader.compactString(), let queue = reader.compactInteger(), queue < table.count,
                  let reason = reader.compactInteger(), reason <= table.count else { return nil }
            tasks.append(NoOpReplay.Task(id: TaskID(id), queue: table[Int(queue)], reason: reason == 0 ? nil : table[Int(reason) - 1]))
        }
        guard let path = reader.compactStrings(), reader.isAtEnd else { return nil }
        return (pipelineFile, outputMode, paths, tasks, path.map { TaskID($0) })
    }
}

extension FileStatus {
    init(kind: Kind, size: Int64, modificationNanoseconds: Int64, inode: UInt64) {
        self.kind = kind
        self.size = size
        self.modificationNanoseconds = modificationNanoseconds
        self.inode = inode
    }
}
