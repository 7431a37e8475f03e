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
    func pathsAreUnchanged() -> Bool {
        ExaminedPathCheck.allUnchanged(paths)
    }

    /// `paths`, `tasks`, `pipelineFile` and `criticalPath`: the part read only once everything else matched.
    var body: [UInt8] {
        // Lengths and integers are 8 bytes each; UTF-8 counts of native strings cost nothing to ask.
        var capacity = 64 + pipelineFile.utf8.count + (outputMode?.utf8.count ?? 0)
        for examined in paths { capacity += 40 + examined.path.utf8.count }
        for task in tasks { capacity += 32 + task.id.rawValue.utf8.count + task.queue.utf8.count + (task.reason?.utf8.count ?? 0) }
        for id in criticalPath { capacity += 8 + id.rawValue.utf8.count }
        var writer = ReplayBytesWriter(capacity: capacity)
        writer.append(pipelineFile)
        writer.append(optional: outputMode)
        writer.append(Int64(paths.count))
        // The files of a folder together, for `ExaminedPathCheck`: grouped, not sorted, which took 0.14 s of
        // a no-op rerun with 200,000 paths (perf).
        let order = Self.positionsGroupedByFolder(paths)
        for index in order {
            let examined = paths[index]
            writer.append(examined.path)
            if let status = examined.status {
                writer.append(status.kind.rawValue)
                writer.append(status.size)
                writer.append(status.modificationNanoseconds)
                writer.append(Int64(bitPattern: status.inode))
            } else {
                writer.append(Int64(-1))
            }
        }
        writer.append(Int64(tasks.count))
        for task in tasks {
            writer.append(task.id.rawValue)
            writer.append(task.queue)
            writer.append(optional: task.reason)
        }
        writer.append(strings: criticalPath.map(\.rawValue))
        return writer.bytes
    }

    /// The positions of `paths` with the files of each folder together, folders in the order first met.
    static func positionsGroupedByFolder(_ paths: [ExaminedPath]) -> [Int] {
        var groupOfFolder: [Substring: Int] = [:]
        var groupOfPath: [Int] = []
        var groupSizes: [Int] = []
        groupOfPath.reserveCapacity(paths.count)
        for examined in paths {
            let path = examined.path
            let folder = path.utf8.lastIndex(of: UInt8(ascii: "/")).map { path[..<$0] } ?? ""
            let group = groupOfFolder[folder] ?? {
                groupOfFolder[folder] = groupSizes.count
                groupSizes.append(0)
                return groupSizes.count - 1
            }()
            groupSizes[group] += 1
            groupOfPath.append(group)
        }
        // A counting sort by group: each group's first free position.
        var next: [Int] = []
        next.reserveCapacity(groupSizes.count)
        var start = 0
        for size in groupSizes {
            next.append(start)
            start += size
        }
        var order = [Int](repeating: 0, count: paths.count)
        for (index, group) in groupOfPath.enumerated() {
            order[next[group]] = index
            next[group] += 1
        }
        return order
    }

    /// Decodes `body`; `nil` for bytes it did not write.
    static func decodeBody(_ bytes: UnsafeRawBufferPointer)
        -> (pipelineFile: String, outputMode: String?, paths: [ExaminedPath], tasks: [NoOpReplay.Task], criticalPath: [TaskID])? {
        var reader = ReplayBytesReader(bytes)
        guard let pipelineFile = reader.string(), let outputMode = reader.optionalString(), let pathCount = reader.count() else { return nil }
        var paths: [ExaminedPath] = []
        paths.reserveCapacity(pathCount)
        for _ in 0..<pathCount {
            guard let path = reader.string(), let code = reader.integer() else { return nil }
            if code == -1 { paths.append(ExaminedPath(path: path, status: nil)); continue }
            guard let kind = FileStatus.Kind(rawValue: code), let size = reader.integer(), let modified = reader.integer(),
                  let inode = reader.integer() else { return nil }
            paths.append(ExaminedPath(path: path, status: FileStatus(kind: kind, size: size, modificationNanoseconds: modified,
                                                                     inode: UInt64(bitPattern: inode))))
        }
        guard let taskCount = reader.count() else { return nil }
        var tasks: [NoOpReplay.Task] = []
        tasks.reserveCapacity(taskCount)
        for _ in 0..<taskCount {
            guard let id = reader.string(), let queue = reader.string(), let reason = reader.optionalString() else { return nil }
            tasks.append(NoOpReplay.Task(id: TaskID(id), queue: queue, reason: reason))
        }
        guard let path = reader.strings(), reader.isAtEnd else { return nil }
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
