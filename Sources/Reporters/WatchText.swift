/// The lines `run --watch` prints between runs, so a user sees why a run starts and that jobgraph waits.
public enum WatchText {
    /// `watching 3 folders for changes (Ctrl-C stops)`.
    public static func watching(folderCount: Int) -> String {
        "watching \(folderCount == 1 ? "1 folder" : "\(folderCount) folders") for changes (Ctrl-C stops)"
    }

    /// `change in a.txt: running again`, or for several files `changes in a.txt, b.txt and 2 more: running again`.
    /// - Parameter paths: the changed files, as they should be shown, at least one.
    public static func rerun(after paths: [String]) -> String {
        let sorted = paths.sorted()
        guard sorted.count > 1 else { return "change in \(sorted.first ?? "?"): running again" }
        let named = sorted.prefix(2).joined(separator: ", ")
        let rest = sorted.count - 2
        return "changes in \(named)\(rest > 0 ? " and \(rest) more" : ""): running again"
    }

    /// `change in p.yaml: reloading it and running again`.
    public static func reload(_ pipelineFile: String) -> String {
        "change in \(pipelineFile): reloading it and running again"
    }

    /// `p.yaml has errors; still watching, save a fix to run again`; the diagnostics go to standard error.
    public static func invalidEdit(_ pipelineFile: String) -> String {
        "\(pipelineFile) has errors; still watching, save a fix to run again"
    }
}
