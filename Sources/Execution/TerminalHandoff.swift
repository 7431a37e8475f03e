import Foundation
import PipelineModel

/// Hands the terminal from the live board to a task that uses it (`interactive`, `prompt`), so that the
/// board's erasing never clears what the task writes (docs/pipeline.md, "Interactive tasks").
///
/// The board calls `boardShown()` when it draws, and `steppedAside(for:)` once it has erased itself for
/// a terminal task; the executor calls `waitForTerminal(_:isStopped:)` on a thread of its own before the
/// task writes anything. Without a board, nothing waits. Safe from any thread; the state is guarded by
/// `condition`.
public final class TerminalHandoff: @unchecked Sendable {
    private let condition = NSCondition()
    private var isBoardShown = false
    private var handedOver: Set<TaskID> = []

    public init() {}

    /// The board is on the screen: terminal tasks wait for it to step aside.
    public func boardShown() {
        condition.withLock { isBoardShown = true }
    }

    /// The board erased itself for `task` and draws nothing until the task ends.
    public func steppedAside(for task: TaskID) {
        condition.withLock {
            handedOver.insert(task)
            condition.broadcast()
        }
    }

    /// The board is gone for good (the run ended or its observer closed): nothing waits for it again.
    public func boardClosed() {
        condition.withLock {
            isBoardShown = false
            // Hand-overs for tasks that never waited (found up to date at their start) are void with the board.
            handedOver.removeAll()
            condition.broadcast()
        }
    }

    /// Wakes the waiters so they look at `isStopped` again.
    public func wakeWaiters() {
        condition.withLock { condition.broadcast() }
    }

    /// Blocks the calling thread until the board has stepped aside for `task`, there is no board, or
    /// `isStopped()` (asked after each `wakeWaiters()`) says so. Never call it on the event loop's thread.
    public func waitForTerminal(_ task: TaskID, isStopped: () -> Bool) {
        condition.withLock {
            while isBoardShown && !handedOver.contains(task) && !isStopped() { condition.wait() }
            handedOver.remove(task)
        }
    }
}
