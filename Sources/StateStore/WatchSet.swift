import Execution
import JobGraphBasics

/// What `run --watch` watches for a selection of tasks: the folders holding their declared inputs and
/// the pipeline file, and which changed paths call for a rerun.
///
/// A path matters when it matches some task's input and no task's output: a run writes its own outputs
/// (often another task's inputs), and rerunning for those would only find everything up to date. The
/// state folder (`.jobgraph/`) never matters. Pure apart from listing folders when built.
public struct WatchSet: Sendable {
    private struct Patterns: Sendable {
        var directory: String
        /// In the task's order; an exclusion (`!glob`) takes out what the entries before it named.
        var patterns: [(glob: GlobPattern, isExclusion: Bool)]

        init(directory: String, texts: [String]) {
            self.directory = directory
            patterns = texts.map { text in
                Fingerprinter.exclusion(text).map { ($0, true) } ?? (GlobPattern(text), false)
            }
        }

        /// Whether the entries name `path`, as `Fingerprinter.files(matching:)` would: the last entry that
        /// matches it decides.
        func names(_ path: String) -> Bool {
            var isNamed = false
            for entry in patterns where entry.glob.matches(path: path, in: directory) { isNamed = !entry.isExclusion }
            return isNamed
        }
    }

    /// The pipeline file, absolute.
    public let pipelineFile: String
    /// Every folder to watch, absolute, sorted.
    public let folders: [String]
    private let inputs: [Patterns]
    private let outputs: [Patterns]
    private let stateDirectory: String
    /// Folders whose new subfolders must be watched too: those watched with all below them.
    private let recursiveRoots: [String]

    /// - Parameters:
    ///   - files: the selected tasks' declared files.
    ///   - pipelineFile: the pipeline file, absolute; its folder is watched, as editors often save by
    ///     writing a new file and renaming it over the old one.
    ///   - stateDirectory: `.jobgraph/` beside the pipeline, absolute.
    public init(files: DeclaredFiles, pipelineFile: String, stateDirectory: String) {
        self.pipelineFile = pipelineFile
        self.stateDirectory = stateDirectory
        inputs = files.tasks.map { Patterns(directory: $0.directory, texts: $0.inputs) }
        outputs = files.tasks.map { Patterns(directory: $0.directory, texts: $0.outputs) }
        var folders: Set<String> = [Self.folder(of: pipelineFile)]
        var roots: Set<String> = []
        for task in inputs {
            for pattern in task.patterns where !pattern.isExclusion {
                let watched = pattern.glob.watchFolders(in: task.directory)
                folders.formUnion(watched.folders)
                if watched.isRecursive, let root = watched.folders.first { roots.insert(root) }
            }
        }
        self.folders = folders.filter { !Self.isInside($0, stateDirectory) }.sorted()
        recursiveRoots = roots.sorted()
    }

    /// Whether a change of `path` (absolute) calls for a rerun: it matches some task's inputs, no task's
    /// outputs, and lies outside the state folder.
    public func isInput(_ path: String) -> Bool {
        guard !Self.isInside(path, stateDirectory) else { return false }
        func matches(_ sets: [Patterns]) -> Bool {
            sets.contains { $0.names(path) }
        }
        return matches(inputs) && !matches(outputs)
    }

    /// Whether a folder created at `path` should be watched too, with everything below it.
    public func watchesNewFolder(_ path: String) -> Bool {
        let name = path.split(separator: "/").last ?? ""
        return !name.hasPrefix(".") && recursiveRoots.contains { Self.isInside(path, $0) } && !Self.isInside(path, stateDirectory)
    }

    /// The inputs already inside a folder just created (or moved in): they were written before its
    /// watch existed, so no event named them.
    public func inputs(below folder: String) -> [String] {
        var files = Set<String>()
        GlobPattern.allFiles(below: folder, into: &files)
        return files.filter(isInput).sorted()
    }

    /// `path` and every folder below it, skipping hidden and linked ones, for a folder just created.
    public static func foldersBelow(_ path: String) -> [String] {
        GlobPattern.folders(from: path)
    }

    private static func folder(of file: String) -> String {
        guard let slash = file.lastIndex(of: "/") else { return "." }
        return slash == file.startIndex ? "/" : String(file[..<slash])
    }

    private static func isInside(_ path: String, _ folder: String) -> Bool {
        path == folder || path.hasPrefix(folder.hasSuffix("/") ? folder : folder + "/")
    }
}
