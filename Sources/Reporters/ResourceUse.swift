import Execution
import PipelineModel

/// What the executing attempts hold against the run's totals: the live board's `cpus 2/2 · mem 12G/32G ·
/// gpus 1/2`, and the report's peaks (docs/pipeline.md, "Resources"). Made only for a pipeline that declares
/// resources. What an attempt holds is what its transition into `executing` says (`TaskTransition.resources`,
/// the Plan's own amounts, a retry's scaled ones included).
public struct ResourceUse: Sendable {
    /// `cpus` (total `--jobs`) first, then each limited resource, in the order of the totals.
    private let names: [String]
    private let totals: [Int64]
    private(set) var inUse: [Int64]
    /// Per task executing: what it holds, by position in `names`.
    private var held: [TaskID: [Int64]] = [:]

    /// - Parameter totals: the run's, `cpus` first (`ResourceTotal.list`, or a run's record).
    public init(totals: [ResourceTotal]) {
        names = totals.map(\.name)
        self.totals = totals.map(\.total)
        inUse = Array(repeating: 0, count: totals.count)
    }

    /// Follows one transition: a task holds what its transition into `executing` says until it leaves
    /// `executing` (a retry's transition back into it says what the next attempt holds).
    mutating func record(_ transition: TaskTransition) {
        if transition.from == .executing, let row = held.removeValue(forKey: transition.task) { release(row) }
        if transition.to == .executing, let resources = transition.resources {
            let row = self.row(of: resources)
            held[transition.task] = row
            hold(row)
        }
    }

    /// `cpus 2/2 · mem 12G/32G · gpus 1/2`.
    var text: String {
        names.indices.map { index in
            "\(names[index]) \(Resources.text(inUse[index], of: names[index]))/\(Resources.text(totals[index], of: names[index]))"
        }.joined(separator: " · ")
    }

    /// The most of each total (in their order) that `attempts` held at once, each holding its `resources`
    /// from its start to its end; one that never ended (its run was killed) holds them to the last moment.
    /// An attempt that ends at the instant another starts is not beside it.
    public static func peaks(of attempts: some Sequence<TaskAttempt>, totals: [ResourceTotal]) -> [Int64] {
        var use = ResourceUse(totals: totals)
        var changes: [(time: Double, isHold: Bool, row: [Int64])] = []
        for attempt in attempts {
            guard let resources = attempt.resources else { continue }
            let row = use.row(of: resources)
            changes.append((attempt.start, true, row))
            changes.append((attempt.end ?? .infinity, false, row))
        }
        changes.sort { ($0.time, $0.isHold ? 1 : 0) < ($1.time, $1.isHold ? 1 : 0) }
        var peaks = use.inUse
        for change in changes {
            if change.isHold {
                use.hold(change.row)
                for index in peaks.indices { peaks[index] = max(peaks[index], use.inUse[index]) }
            } else {
                use.release(change.row)
            }
        }
        return peaks
    }

    /// `resources` by position in `names`; a name the totals do not have counts for nothing.
    private func row(of resources: Resources) -> [Int64] {
        names.map { resources[$0] ?? 0 }
    }

    private mutating func hold(_ row: [Int64]) {
        for index in row.indices { inUse[index] += row[index] }
    }

    private mutating func release(_ row: [Int64]) {
        for index in row.indices { inUse[index] -= row[index] }
    }
}
