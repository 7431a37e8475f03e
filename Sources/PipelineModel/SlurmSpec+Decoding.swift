import JobGraphBasics
import YAMLNodes

extension SlurmSpec {
    /// Every key of a `slurm:` mapping, in the order messages list them.
    static let keys = KeySet([
        "partition", "account", "time", "cpus", "mem", "nodes", "mode", "queue_size", "submit_rate", "poll_interval",
        "sbatch_args", "srun_args",
    ])

    /// Keys that describe the whole run, so only the top level may set them.
    static let runKeys: Set<String> = ["mode", "queue_size", "submit_rate", "poll_interval"]

    /// Where a `slurm:` mapping is written, for messages.
    enum Level {
        case topLevel
        case queue(String)
        case task(String)
        case defaults

        var owner: String {
            switch self {
            case .topLevel: "the top-level 'slurm'"
            case .queue(let name): "'slurm' of queue '\(name)'"
            case .task(let id): "'slurm' of task '\(id)'"
            case .defaults: "'slurm' of 'defaults'"
            }
        }
    }

    /// Decodes a `slurm:` mapping, reporting every problem; `nil` after any.
    static func decode(_ node: YAMLNode, level: Level, decoder: inout NodeDecoder) -> SlurmSpec? {
        guard let entries = decoder.mapping(node, expected: "a mapping of Slurm options such as '{partition: debug}'", for: "slurm")
        else { return nil }
        var spec = SlurmSpec(location: node.location)
        let known = decoder.knownEntries(entries, allowed: keys, in: level.owner)
        var isValid = known.count == entries.count
        for field in known where field.entry.value.scalar?.isNull != true {
            let value = field.entry.value, key = field.key
            if case .topLevel = level {} else if runKeys.contains(key) {
                decoder.error("'\(key)' applies to the whole run; set it in the top-level 'slurm', not in \(level.owner)", at: field.entry.key)
                isValid = false
                continue
            }
            let before = decoder.diagnostics.errorCount
            switch key {
            case "partition": spec.partition = decoder.nonEmptyText(value, expected: "a partition name", for: key)
            case "account": spec.account = decoder.nonEmptyText(value, expected: "an account name", for: key)
            case "time": spec.time = time(value, decoder: &decoder)
            case "cpus": spec.cpus = decoder.integer(value, for: key, in: 1...4096)
            case "nodes": spec.nodes = decoder.integer(value, for: key, in: 1...100_000)
            case "mem": spec.mem = memory(value, decoder: &decoder)
            case "mode": spec.mode = decoder.choice(value, for: key, noun: "Slurm mode")
            case "queue_size": spec.queueSize = decoder.integer(value, for: key, in: 1...100_000)
            case "submit_rate": spec.submitRate = decoder.number(value, for: key, above: 0)
            case "poll_interval": spec.pollInterval = decoder.duration(value, for: key, positive: true)
            case "sbatch_args", "srun_args":
                let arguments = decoder.scalarList(value, expected: "a list of arguments such as ['--qos=long']", for: key)?
                    .compactMap { $0.scalar?.text }
                if key == "sbatch_args" { spec.sbatchArgs = arguments } else { spec.srunArgs = arguments }
            default: break
            }
            if decoder.diagnostics.errorCount != before { isValid = false }
        }
        return isValid ? spec : nil
    }

    /// `time:` as jobgraph writes durations (`90m`, `2h`) or as Slurm does (`MM:SS`, `HH:MM:SS`, `D-HH:MM:SS`).
    private static func time(_ node: YAMLNode, decoder: inout NodeDecoder) -> Double? {
        if let text = node.scalar?.text, text.contains(":"), let seconds = seconds(fromSlurmTime: text), seconds > 0 {
            return decoder.withinLongestDuration(seconds, node, for: "time")
        }
        guard let scalar = node.scalar, !scalar.isNull, let seconds = DurationText.seconds(from: scalar.text), seconds > 0 else {
            decoder.error(
                "invalid time \(NodeDecoder.found(node)) for 'time'; use a duration such as '90m' or '2h', or Slurm's 'HH:MM:SS'",
                at: node)
            return nil
        }
        return decoder.withinLongestDuration(seconds, node, for: "time")
    }

    /// Seconds from Slurm's `MM:SS`, `HH:MM:SS` or `D-HH:MM:SS` (as `sinfo` prints time limits too).
    public static func seconds(fromSlurmTime text: String) -> Double? {
        var days = 0
        var clock = Substring(text)
        if let dash = text.firstIndex(of: "-") {
            guard let value = Int(text[..<dash]), value >= 0 else { return nil }
            days = value
            clock = text[text.index(after: dash)...]
        }
        let parts = clock.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
        guard (2...3).contains(parts.count), parts.allSatisfy({ $0 != nil && $0! >= 0 }) else { return nil }
        // In floating point: days or hours near `Int.max` would overflow an integer product.
        let numbers = parts.map { Double($0!) }
        let seconds = numbers.count == 3 ? numbers[0] * 3600 + numbers[1] * 60 + numbers[2] : numbers[0] * 60 + numbers[1]
        return Double(days) * 86400 + seconds
    }

    /// `mem:` as Slurm reads it: a whole number with an optional unit K, M, G or T (megabytes without one).
    private static func memory(_ node: YAMLNode, decoder: inout NodeDecoder) -> String? {
        let text = node.scalar?.text ?? ""
        let digits = text.last.map { "KMGTkmgt".contains($0) } == true ? text.dropLast() : Substring(text)
        guard node.scalar != nil, !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), Int(digits).map({ $0 > 0 }) == true else {
            decoder.error("invalid memory \(NodeDecoder.found(node)) for 'mem'; use a size such as '500M' or '4G'", at: node)
            return nil
        }
        return text.uppercased()
    }
}

extension Pipeline {
    /// `executor:` and the top-level `slurm:`.
    static func decodeExecutor(_ values: [String: YAMLMappingEntry], into pipeline: inout Pipeline, decoder: inout NodeDecoder) {
        if let entry = values["executor"], entry.value.scalar?.isNull != true {
            pipeline.executor = decoder.choice(entry.value, for: "executor", noun: "executor")
        }
        if let entry = values["slurm"], entry.value.scalar?.isNull != true {
            pipeline.slurm = SlurmSpec.decode(entry.value, level: .topLevel, decoder: &decoder)
        }
    }
}
