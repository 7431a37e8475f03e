extension Pipeline {
    /// What a shell may complete a word of `jobgraph run` to: the task ids, and, once a task is named, its
    /// params as `NAME=` (those not given already), each starting with `prefix`.
    /// - Parameter before: the words before the one being completed (flags and a file name among them are
    ///   passed over: they are no task id).
    public func runCompletions(before: [String], prefix: String) -> [String] {
        var current: TaskSpec?
        var given: Set<String> = []
        let byID = Dictionary(tasks.map { ($0.id.rawValue, $0) }, uniquingKeysWith: { first, _ in first })
        for word in before {
            if let task = byID[word] {
                current = task
                given = []
            } else if let equals = word.firstIndex(of: "=") {
                given.insert(String(word[..<equals]))
            }
        }
        let parameters = (current?.parameters ?? []).map { "\($0.name)=" }.filter { !given.contains(String($0.dropLast())) }
        return (parameters + tasks.map(\.id.rawValue)).filter { $0.hasPrefix(prefix) }
    }
}
