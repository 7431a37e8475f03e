import Execution
import PipelineModel

/// What the console shows of the lines tasks print, in each `OutputMode`; the plain lines and the live
/// board share it, so both modes of progress agree.
///
/// `grouped` holds an executing task's lines and hands them back as one block, under a header, when
/// the attempt ends in any way (succeeded, failed, cancelled), so a failed task's output is never lost;
/// whatever is still held when the run ends comes out through `remainingBlocks()`. A line from a task
/// that is not executing (a condition's command while it waits) has no block to join and is shown at
/// once, prefixed. Use from one observer, one event at a time.
struct OutputGrouping {
    let mode: OutputMode
    private var executing: Set<TaskID> = []
    private var held: [TaskID: [String]] = [:]
    /// The order tasks first held a line in, so the blocks left at the end come out in a stable order.
    private var heldOrder: [TaskID] = []

    init(mode: OutputMode) {
        self.mode = mode
    }

    /// Whether lines are held per attempt; in the other modes no transition has a block.
    var isGrouped: Bool { mode == .grouped }

    /// The lines to show now for one line a task printed; in `grouped` mode usually none (it is held).
    mutating func lines(for line: String, of task: TaskID) -> [String] {
        switch mode {
        case .prefixed: return [RunText.output(task: task, line: line)]
        case .interleaved: return [line]
        case .grouped:
            guard executing.contains(task) else { return [RunText.output(task: task, line: line)] }
            if held[task] == nil { heldOrder.append(task) }
            held[task, default: []].append(line)
            return []
        }
    }

    /// Notes a transition; when it ends an attempt that printed something in `grouped` mode, returns the
    /// block to show: `header` (the transition's own line: id, state, duration), then the lines.
    /// - Returns: `nil` when there is no block, and the caller shows the transition as usual, if at all.
    mutating func block(endedBy transition: TaskTransition, header: @autoclosure () -> String) -> [String]? {
        guard isGrouped else { return nil }
        if transition.to == .executing {
            executing.insert(transition.task)
            return nil
        }
        guard executing.remove(transition.task) != nil, let lines = held.removeValue(forKey: transition.task) else { return nil }
        heldOrder.removeAll { $0 == transition.task }
        return [header()] + lines
    }

    /// Every block still held, for a run that ended without reporting some attempt's end; each under a
    /// header naming its task.
    mutating func remainingBlocks() -> [String] {
        var lines: [String] = []
        for task in heldOrder {
            guard let block = held.removeValue(forKey: task) else { continue }
            lines.append("\(task)  output of an attempt that did not report its end")
            lines += block
        }
        heldOrder.removeAll()
        executing.removeAll()
        return lines
    }
}
