import JobGraphBasics
import YAMLNodes

extension TaskSpec {
    /// `retry_on: [timeout, oom, 75]`: cause names and exit codes (1 to 255); `nil` after any problem.
    static func decodeRetryOn(_ node: YAMLNode, decoder: inout NodeDecoder) -> [RetryCondition]? {
        let expected = "a list of failure causes or exit codes such as [timeout, oom, 75]"
        guard let entries = decoder.scalarList(node, expected: expected, for: "retry_on") else { return nil }
        let names = FailureCause.allCases.map(\.rawValue)
        var conditions: [RetryCondition] = []
        var isValid = true
        for entry in entries {
            guard let scalar = entry.scalar else { continue }
            if case .integer(let code) = scalar.value {
                guard (1...255).contains(code) else {
                    decoder.error("exit code \(code) in 'retry_on' is not one a failing process can have; use 1 to 255", at: entry)
                    isValid = false
                    continue
                }
                conditions.append(.exitCode(Int32(code)))
            } else if let cause = FailureCause(rawValue: scalar.text) {
                conditions.append(.cause(cause))
            } else {
                let hint = Suggestion.closest(to: scalar.text, in: names).map { "; did you mean '\($0)'?" }
                    ?? "; use \(Suggestion.list(names)), or an exit code"
                decoder.error("unknown failure cause '\(NodeDecoder.shortened(scalar.text))' in 'retry_on'\(hint)", at: entry)
                isValid = false
            }
        }
        if isValid && conditions.isEmpty {
            decoder.error("'retry_on' is empty; list at least one cause, or leave the key out to retry every failure", at: node)
            return nil
        }
        return isValid ? conditions : nil
    }
}

extension RetryScale {
    static let keys = KeySet(["mem", "time", "cpus"])

    /// `retry_scale: {mem: 2, time: 1.5, cpus: 1}`: each factor more than 0 and at most 1000; `nil` after any problem.
    static func decode(_ node: YAMLNode, owner: String, decoder: inout NodeDecoder) -> RetryScale? {
        guard let entries = decoder.mapping(node, expected: "a mapping of factors such as '{mem: 2, time: 1.5}'", for: "retry_scale")
        else { return nil }
        var scale = RetryScale()
        let known = decoder.knownEntries(entries, allowed: keys, in: owner)
        var isValid = known.count == entries.count
        for field in known where field.entry.value.scalar?.isNull != true {
            let before = decoder.diagnostics.errorCount
            guard let factor = decoder.number(field.entry.value, for: field.key, above: 0) else {
                isValid = false
                continue
            }
            if factor > largestFactor {
                decoder.error("'\(field.key)' must be at most 1000, found \(field.entry.value.scalar?.text ?? "")", at: field.entry.value)
            }
            switch field.key {
            case "mem": scale.mem = factor
            case "time": scale.time = factor
            default: scale.cpus = factor
            }
            if decoder.diagnostics.errorCount != before { isValid = false }
        }
        return isValid ? scale : nil
    }
}
