import TaskGraph

/// The run's task operations, each made when the Plan first starts its task and let go once nothing
/// needs it any more.
///
/// Why not all before the run: an `Operation` of swift-corelibs-foundation carries two locks and a
/// condition of its own, and with its dependency edges a task's cost about 600 bytes: a quarter of the
/// peak memory of a 100,000-task run went to operations of tasks that had not started yet (massif,
/// 20,000 tasks: 11.3 MB of 32.5 MB at the start of the run).
///
/// The model is the same: one operation per task that runs, its `needs` as `addDependency` edges. A
/// task starts only after its needs ended, so their operations exist, finished, when its own is made.
/// An operation is let go once its task ended and every dependent's operation (which holds it as a
/// dependency) was made, or that dependent ended without one; the runner drops a finished operation's
/// own dependencies, so that what stays alive is the frontier of the run, not the whole graph.
struct LiveOperations {
    private enum Life: UInt8 {
        case notMade, live, ended
    }

    private var operations: [TaskOperation?]
    private var life: [Life]
    /// Per task, the dependents that may still take its operation as a dependency.
    private var awaitedBy: [Int32]
    private let dependencies: AdjacencyLists

    /// For the graph's tasks; a fan-out's items join through `append()`.
    /// - Parameter isService: whether a task is a service, whose dependents start while it executes, so
    ///   its operation is nobody's dependency (the Plan keeps that rule).
    init(graph: TaskGraph, isService: (Int) -> Bool) {
        let count = graph.nodes.count
        operations = Array(repeating: nil, count: count)
        life = Array(repeating: .notMade, count: count)
        dependencies = graph.dependencies
        var awaitedBy = [Int32](repeating: 0, count: count)
        for index in 0..<count where !isService(index) {
            awaitedBy[index] = Int32(graph.dependents[index].count)
        }
        self.awaitedBy = awaitedBy
    }

    /// Makes room for an item a dynamic fan-out added: it needs no operation and none needs its own.
    mutating func append() {
        operations.append(nil)
        life.append(.notMade)
        awaitedBy.append(0)
    }

    /// The operation of a task the Plan starts: made on its first start (with its ended needs' operations
    /// as dependencies), the same one on a retry.
    mutating func operation(for index: Int, make: () -> TaskOperation) -> TaskOperation? {
        switch life[index] {
        case .live: return operations[index]
        case .ended: return nil
        case .notMade: break
        }
        let operation = make()
        operations[index] = operation
        life[index] = .live
        if index < dependencies.count {
            for need in dependencies[index] {
                if let needed = operations[need], awaitedBy[need] > 0 { operation.addDependency(needed) }
            }
        }
        noteTaken(needsOf: index)
        return operation
    }

    /// A task ended: returns its operation, for the caller to finish, if it had one.
    mutating func end(_ index: Int) -> TaskOperation? {
        let wasMade = life[index] == .live
        guard life[index] != .ended else { return nil }
        life[index] = .ended
        let operation = operations[index]
        // A dependent that ends without ever starting will take none of its needs' operations.
        if !wasMade { noteTaken(needsOf: index) }
        releaseIfUnneeded(index)
        return operation
    }

    private mutating func noteTaken(needsOf index: Int) {
        guard index < dependencies.count else { return }
        for need in dependencies[index] where awaitedBy[need] > 0 {
            awaitedBy[need] -= 1
            releaseIfUnneeded(need)
        }
    }

    private mutating func releaseIfUnneeded(_ index: Int) {
        if life[index] == .ended && awaitedBy[index] == 0 { operations[index] = nil }
    }
}
