/// Finds the pipeline file a command means when the user names none, as go-task finds its Taskfile.
///
/// Pure over an injected file test, so the rules are unit-testable without a disk.
public enum PipelineDiscovery {
    /// The names looked for in each folder, in order of preference.
    public static let fileNames = ["jobgraph.yaml", "jobgraph.yml"]

    /// The nearest pipeline file in `directory` or one of its parents.
    /// - Parameters:
    ///   - directory: an absolute path, usually the working directory.
    ///   - isFile: whether a path names an existing regular file.
    /// - Returns: the file as a path relative to `directory` (`jobgraph.yaml`, `../jobgraph.yaml`), so
    ///   messages name it as the user would type it; `nil` when no folder up to `/` holds one.
    public static func nearestFile(from directory: String, isFile: (String) -> Bool) -> String? {
        var folder = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        var up = ""
        while true {
            for name in fileNames where isFile(folder == "/" ? "/" + name : folder + "/" + name) {
                return up + name
            }
            guard folder != "/", let slash = folder.lastIndex(of: "/") else { return nil }
            folder = slash == folder.startIndex ? "/" : String(folder[..<slash])
            up += "../"
        }
    }

    /// Whether a command's first argument names the pipeline file rather than a task: it ends in `.yaml`
    /// or `.yml`, or holds a `/` (no task id does), so `run p.yaml build` keeps its meaning while
    /// `run build` runs the task `build` of the discovered file.
    public static func namesFile(_ argument: String) -> Bool {
        argument.hasSuffix(".yaml") || argument.hasSuffix(".yml") || argument.contains("/")
    }
}
