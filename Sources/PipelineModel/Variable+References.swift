import JobGraphBasics
import YAMLNodes

extension Variable {
    /// The values of `vars` with their `{{ name }}` references to other variables substituted, each variable
    /// once, in the order its references need (`vars: {log: "{{ level }}"}` once stayed literal).
    ///
    /// Only values written in the file are templates; a `--var` value is taken as given. A `sh` variable's
    /// command is rendered with each value shell-quoted and run by `commands` when the variables it names
    /// are done; its output, less one trailing newline, is its value.
    /// - Parameters:
    ///   - variables: every variable, with its value as written or as `--var` gave it.
    ///   - templates: per variable, its value parsed as a template when the file wrote one with a
    ///     placeholder; `nil` for a literal value or one `--var` replaced.
    ///   - commands: runs a `sh` command; `nil` runs none, leaving such variables empty.
    ///   - diagnostics: receives a cycle, at the variable that closes it, with the way round, and a
    ///     command that failed, at its variable.
    /// - Returns: `variables` with their values substituted; a variable on a cycle keeps its text.
    static func resolvingReferences(
        _ variables: [Variable], templates: [Template?], commands: VariableCommandRunner? = nil, diagnostics: inout Diagnostics
    ) -> [Variable] {
        guard templates.contains(where: { $0 != nil }) else { return variables }
        var indexByName: [String: Int] = [:]
        for (index, variable) in variables.enumerated() { indexByName[variable.name] = index }
        enum Mark { case unvisited, visiting, done }
        var marks = [Mark](repeating: .unvisited, count: variables.count)
        var resolved = variables
        var reported = Set<Int>()

        // Depth first, without recursion: a chain of a thousand variables must not exhaust the stack.
        for root in variables.indices where marks[root] == .unvisited {
            var stack: [(index: Int, next: Int)] = [(root, 0)]
            marks[root] = .visiting
            while let top = stack.last {
                let references = templates[top.index]?.variableNames ?? []
                if top.next < references.count {
                    stack[stack.count - 1].next += 1
                    guard let target = indexByName[references[top.next]] else { continue }  // the parser reported it
                    switch marks[target] {
                    case .done: continue
                    case .unvisited:
                        marks[target] = .visiting
                        stack.append((target, 0))
                    case .visiting:
                        guard reported.insert(target).inserted else { continue }
                        let cycle = stack.drop { $0.index != target }.map { variables[$0.index].name } + [variables[target].name]
                        diagnostics.error(
                            "variable '\(variables[top.index].name)' refers back to itself: \(cycle.joined(separator: " -> "))",
                            at: variables[top.index].location)
                    }
                    continue
                }
                stack.removeLast()
                marks[top.index] = .done
                guard let template = templates[top.index] else { continue }
                let isCommand = variables[top.index].command != nil
                let text = template.segments.map { segment in
                    switch segment {
                    case .literal(let text): text
                    case .variable(let path, _):
                        indexByName[path[0]].map { isCommand ? ShellQuoting.quoted(resolved[$0].value) : resolved[$0].value } ?? ""
                    }
                }.joined()
                guard isCommand else {
                    resolved[top.index].value = text
                    continue
                }
                // A command on a cycle is not run: its text still holds a placeholder's stand-in.
                guard let commands, reported.isEmpty else { continue }
                resolved[top.index].value = Self.output(of: text, for: variables[top.index], commands: commands, diagnostics: &diagnostics)
            }
        }
        return resolved
    }

    /// What `command` printed, less one trailing newline; a failure is an error at the variable, naming
    /// the exit status and the last five lines the command wrote to standard error.
    private static func output(
        of command: String, for variable: Variable, commands: VariableCommandRunner, diagnostics: inout Diagnostics
    ) -> String {
        let output = commands(command)
        guard output.status == 0 else {
            let status = output.status.map { "exited with status \($0)" } ?? "could not start"
            // The last lines say why, as a log's tail does; a chatty command must not flood the message.
            let errorText = output.standardError.split(separator: "\n").map(String.init).filter { !$0.isEmpty }.suffix(5)
                .joined(separator: "; ")
            diagnostics.error(
                "the command of variable '\(variable.name)' (sh: \(variable.command ?? command)) \(status)\(errorText.isEmpty ? "" : ": \(errorText)")",
                at: variable.location)
            return ""
        }
        var value = output.standardOutput
        if let last = value.last, last == "\n" || last == "\r\n" { value.removeLast() }
        return value
    }
}
