import JobGraphBasics
import PipelineModel

extension TaskSpec {
    /// What decides when and how the task runs beyond its needs, as short phrases for `run --dry-run`,
    /// `list` and `graph`: `parallel: 3 commands`, `if file build/a exists and $HOME is set`,
    /// `exclusive: db`, `service, ready when 127.0.0.1:8765 is reachable within 10s`, `prompts 'Deploy?', alone`.
    /// Empty for a plain task.
    public var gateNotes: [String] {
        var notes: [String] = []
        if case .parallel(let commands) = action { notes.append("parallel: \(String(counting: commands.count, "command"))") }
        if !conditions.isEmpty { notes.append("if " + conditions.map(\.summary).joined(separator: " and ")) }
        if !exclusive.isEmpty { notes.append("exclusive: " + exclusive.joined(separator: ", ")) }
        if let service { notes.append(service.summary) }
        if isInteractive { notes.append("interactive, alone") }
        if let prompt { notes.append("prompts '\(prompt)', alone") }
        return notes
    }
}

extension Condition {
    /// A short reading of the condition, as the file states it: `file build/a exists`, `$HOME is set`,
    /// `` `test -d .git` succeeds ``, `127.0.0.1:5432 is reachable`.
    public var summary: String {
        switch self {
        case .fileExists(let path): "file \(path) exists"
        case .environmentSet(let name): "$\(name) is set"
        case .command(let command): "`\(command)` succeeds"
        case .reachable(let host, let port): "\(host):\(port) is reachable"
        case .platform(let names): "platform is \(names.joined(separator: " or "))"
        }
    }
}

extension ServiceSpec {
    /// `service`, with when it counts as ready and how long it may take: `service, ready when
    /// 127.0.0.1:8765 is reachable within 10s`. Without `ready` it is ready at once.
    public var summary: String {
        guard let ready else { return "service" }
        return "service, ready when \(ready.summary)" + (timeout.map { " within \(Self.seconds($0))" } ?? "")
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value))s" : "\(value)s"
    }
}
