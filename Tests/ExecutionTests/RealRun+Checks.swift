import Execution
import PipelineModel

/// Questions about a real run's event stream that the Advanced NSOperations tests share.
extension RealRun {
    /// The moves a task may make (contract: "Task states"); a retry goes from `failed` back to `executing`.
    private static let allowedMoves: Set<String> = [
        "pending>waiting", "pending>ready", "pending>skipped", "pending>cancelled",
        "waiting>ready", "waiting>skipped", "waiting>cancelled",
        "ready>executing", "ready>waiting", "ready>skipped", "ready>cancelled",
        "executing>succeeded", "executing>failed", "executing>cancelled", "executing>skipped", "executing>up-to-date",
        "failed>executing",
    ]

    /// Every transition that does not continue its task's previous one along an allowed move, as
    /// `task: from -> to`; empty when each task's story holds together.
    var brokenLifecycles: [String] {
        var current: [TaskID: TaskState] = [:]
        var broken: [String] = []
        for transition in observer.transitions {
            let previous = current[transition.task] ?? .pending
            let move = "\(transition.from.rawValue)>\(transition.to.rawValue)"
            if transition.from != previous || !Self.allowedMoves.contains(move) {
                broken.append("\(transition.task): \(transition.from.rawValue) -> \(transition.to.rawValue) (was \(previous.rawValue))")
            }
            current[transition.task] = transition.to
        }
        return broken
    }

    /// The most tasks among `tasks` executing at once, counted from the transitions.
    func maximumExecuting(among tasks: (TaskID) -> Bool) -> Int {
        var executing = 0, maximum = 0
        for transition in observer.transitions where tasks(transition.task) {
            if transition.to == .executing { executing += 1 }
            if transition.from == .executing { executing -= 1 }
            maximum = max(maximum, executing)
        }
        return maximum
    }

    /// The tasks among `tasks` in the order they first started executing.
    func startOrder(among tasks: (TaskID) -> Bool) -> [TaskID] {
        var seen: Set<TaskID> = []
        return observer.transitions.compactMap { transition in
            guard transition.to == .executing, tasks(transition.task), seen.insert(transition.task).inserted else { return nil }
            return transition.task
        }
    }

    /// Every transition of `task`, as `from -> to`.
    func moves(of task: TaskID) -> [String] {
        observer.transitions.filter { $0.task == task }.map { "\($0.from.rawValue) -> \($0.to.rawValue)" }
    }

    /// The first transition of `task` to `state`.
    func transition(of task: TaskID, to state: TaskState) -> TaskTransition? {
        observer.transitions.first { $0.task == task && $0.to == state }
    }
}
