import JobGraphBasics

/// `resources:` — in a task, what it holds while it executes; at the top level (or from `--resources`),
/// the totals the run shares among its tasks (docs/pipeline.md, "Resources").
///
/// `cpus` is how many `--jobs` slots a task holds, so its total is `--jobs`; `mem` is in bytes and its
/// total defaults to the machine's memory; any other name is a count with no limit unless a total is given.
public struct Resources: Hashable, Sendable {
    /// One name and its amount, where it is written.
    public struct Amount: Hashable, Sendable {
        public var name: String
        /// Bytes for `mem`, a count otherwise.
        public var value: Int64
        public var location: SourceLocation?

        public init(name: String, value: Int64, location: SourceLocation? = nil) {
            self.name = name
            self.value = value
            self.location = location
        }
    }

    public static let cpus = "cpus"
    public static let memory = "mem"
    public static let gpus = "gpus"
    /// The most `cpus` a task may ask for (as Slurm's `cpus`).
    public static let mostCPUs: Int64 = 4096
    /// The most of any count, and of bytes: far beyond any machine, and far from overflowing a sum.
    public static let mostAmount: Int64 = 1 << 60

    /// In the order written.
    public var amounts: [Amount]
    /// Where the mapping is written.
    public var location: SourceLocation?

    public init(_ amounts: [Amount] = [], location: SourceLocation? = nil) {
        self.amounts = amounts
        self.location = location
    }

    public subscript(name: String) -> Int64? {
        amounts.first { $0.name == name }?.value
    }

    /// The `--jobs` slots a task holds: its `cpus`, 1 when it names none.
    public var cpus: Int { Int(self[Self.cpus] ?? 1) }

    /// These amounts with each that `other` names replaced by (or added from) `other`'s.
    public func overridden(by other: Resources) -> Resources {
        var merged = self
        for amount in other.amounts {
            if let index = merged.amounts.firstIndex(where: { $0.name == amount.name }) {
                merged.amounts[index] = amount
            } else {
                merged.amounts.append(amount)
            }
        }
        return merged
    }

    /// An amount as the file writes it: `mem` as a size (`512M`, `8G`, `1.5T`), any other as a number.
    public static func text(_ value: Int64, of name: String) -> String {
        name == memory ? ByteSize.shortText(value) : String(value)
    }

    /// The amount `text` gives for `name`, or why it is not one (to follow "invalid … for 'NAME'").
    ///
    /// `mem` is a size with a unit (a bare number would mean bytes to some tools and megabytes to Slurm);
    /// `cpus` a whole number from 1; any other name a whole number from 0.
    public static func value(_ text: String, of name: String) -> Result<Int64, AmountError> {
        if name == memory {
            guard hasSizeUnit(text), let bytes = ByteSize.parse(text), bytes > 0, bytes <= mostAmount else {
                return .failure(AmountError(message: "use a size with a unit such as '512M', '8G' or '1T'"))
            }
            return .success(bytes)
        }
        let lowest: Int64 = name == cpus ? 1 : 0
        let highest = name == cpus ? mostCPUs : mostAmount
        guard let count = Int64(text), (lowest...highest).contains(count) else {
            return .failure(AmountError(message: "use a whole number from \(lowest) to \(highest)"))
        }
        return .success(count)
    }

    /// Whether `text` is a decimal number and a unit K, M, G or T (`8G`, `1.5T`, `512MiB`), as the schema
    /// says: `ByteSize` alone also takes bytes without a unit and exponents.
    private static func hasSizeUnit(_ text: String) -> Bool {
        var number = Substring(text.lowercased())
        if number.hasSuffix("ib") { number = number.dropLast(2) } else if number.hasSuffix("b") { number = number.dropLast() }
        guard let unit = number.last, "kmgt".contains(unit) else { return false }
        let parts = number.dropLast().split(separator: ".", omittingEmptySubsequences: false)
        return (1...2).contains(parts.count) && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { ("0"..."9").contains($0) } }
    }

    /// Why a text is not an amount.
    public struct AmountError: Error, Sendable {
        public var message: String
    }

    /// Whether `name` may name a resource: a letter, then letters, digits, `_` or `-`.
    public static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-") }
    }

    /// `--resources mem=16G,gpus=0`, or why the text is not that.
    public static func parseOption(_ text: String) -> Result<Resources, AmountError> {
        var resources = Resources()
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = pieces.first.map(String.init) ?? ""
            guard pieces.count == 2, isValidName(name) else {
                return .failure(AmountError(message: "'--resources' expects NAME=AMOUNT pairs separated by commas, such as 'mem=16G,gpus=0'; found '\(part)'"))
            }
            guard name != cpus else {
                return .failure(AmountError(message: "'--resources' cannot set 'cpus': its total is '--jobs'"))
            }
            switch value(String(pieces[1]), of: name) {
            case .success(let amount):
                resources = resources.overridden(by: Resources([Amount(name: name, value: amount)]))
            case .failure(let error):
                return .failure(AmountError(message: "invalid amount '\(pieces[1])' for '\(name)' in '--resources'; \(error.message)"))
            }
        }
        return .success(resources)
    }
}

extension TaskSpec {
    /// The `--jobs` slots the task holds while it executes: its `cpus`, once per command of a `parallel` group.
    public var slotCount: Int { slotCount(cpus: resources?.cpus ?? 1) }

    /// The `--jobs` slots a task holding `cpus` per process holds: once per command of a `parallel` group.
    public func slotCount(cpus: Int) -> Int {
        if case .parallel(let commands) = action { return cpus * max(1, commands.count) }
        return cpus
    }
}

extension Pipeline {
    /// Whether the file declares resources at all (the top level or any task): only then do the live
    /// board, the report and the dry run show them.
    public var declaresResources: Bool {
        resources != nil || tasks.contains { $0.resources != nil }
    }
}

extension Resources {
    /// The totals a run's tasks share: the file's `resources`, each name `--resources` gives replaced,
    /// and `mem` the machine's memory when neither gives it. `cpus` is not among them: its total is `--jobs`.
    public static func totals(declared: Resources?, option: Resources?, machineMemory: Int64?) -> Resources {
        var totals = (declared ?? Resources()).overridden(by: option ?? Resources())
        if totals[memory] == nil, let machineMemory, machineMemory > 0 {
            totals.amounts.append(Amount(name: memory, value: machineMemory))
        }
        return totals
    }

    /// An error at each amount of these tasks' `resources` above its total, before anything runs.
    /// - Parameters:
    ///   - totals: from `totals(declared:option:machineMemory:)`.
    ///   - option: `--resources`, to name it when a total comes from it.
    ///   - jobs: `--jobs`, the total of `cpus`.
    public static func excessDiagnostics(of tasks: some Sequence<TaskSpec>, totals: Resources, declared: Resources?,
                                         option: Resources?, jobs: Int) -> Diagnostics {
        var diagnostics = Diagnostics()
        var seen = Set<SourceLocation>()
        for task in tasks {
            guard let resources = task.resources else { continue }
            for amount in resources.amounts {
                let total = amount.name == cpus ? Int64(jobs) : totals[amount.name]
                guard let total, amount.value > total, let location = amount.location, seen.insert(location).inserted else { continue }
                let source = TotalSource(of: amount.name, declared: declared, option: option)
                diagnostics.error(
                    "task '\(task.id.rawValue)' asks for \(amount.name) \(text(amount.value, of: amount.name)), more than the total: "
                        + source.text(name: amount.name, total: total),
                    at: location)
            }
        }
        return diagnostics
    }
}

/// Where a run's total of one resource comes from (docs/pipeline.md, "Resources"); the raw values are
/// what `state.db` keeps (docs/state.md).
public enum TotalSource: String, Sendable, CaseIterable {
    /// `cpus`: its total is `--jobs`.
    case jobs
    /// `--resources NAME=AMOUNT`.
    case option
    /// The file's top-level `resources`.
    case file
    /// `mem` that neither gives: the machine's memory.
    case machine

    /// Where the total of `name` comes from, the same way `Resources.totals` chose it: `--resources` over
    /// the file, the machine's memory for a `mem` neither gives.
    public init(of name: String, declared: Resources?, option: Resources?) {
        if name == Resources.cpus {
            self = .jobs
        } else if option?[name] != nil {
            self = .option
        } else if declared?[name] != nil {
            self = .file
        } else {
            self = .machine
        }
    }

    /// `'--jobs' 4`, `'--resources mem=1G'`, `the top-level 'resources' (gpus: 2)`, `the machine's memory, 31G`.
    public func text(name: String, total: Int64) -> String {
        let amount = Resources.text(total, of: name)
        return switch self {
        case .jobs: "'--jobs' \(amount)"
        case .option: "'--resources \(name)=\(amount)'"
        case .file: "the top-level 'resources' (\(name): \(amount))"
        case .machine: "the machine's memory, \(amount)"
        }
    }
}
