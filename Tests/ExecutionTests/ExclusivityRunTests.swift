import Execution
import Foundation
import JobGraphTestSupport
import PipelineModel
import Testing

/// `exclusive:` with real processes (contract: "exclusive"; Advanced NSOperations' mutual exclusivity): no
/// two tasks of one category execute at once, across queues; the next one is chosen by the scheduling
/// rules; several categories never deadlock. Each command also takes a lock directory per category with
/// `mkdir`, which fails if another process holds it, so an overlap fails the task as well as the count.
@Suite(.hangLimit(minutes: 1))
struct ExclusivityRunTests {
    /// A command that holds `categories`' lock directories for a moment and appends `name` to `order.txt`.
    private static func command(_ name: String, holding categories: [String]) -> String {
        let take = categories.map { "mkdir \($0).lock" }.joined(separator: " && ")
        let give = categories.map { "\($0).lock" }.joined(separator: " ")
        return "\(take) && echo \(name) >> order.txt && sleep 0.05 && rmdir \(give)"
    }

    @Test func tasksOfOneCategoryNeverOverlapAcrossQueuesAndGoByPriority() async throws {
        let priorities = ["low", "very-high", "normal", "high", "very-low"]
        let queues = ["a", "b", "default-queue", "a", "b"]
        let tasks = priorities.indices.map { index in
            let queue = queues[index] == "default-queue" ? "" : "queue: \(queues[index]), "
            return "  db-\(priorities[index]): {\(queue)priority: \(priorities[index]), exclusive: [db], "
                + "run: \"\(Self.command("db-\(priorities[index])", holding: ["db"]))\"}"
        }
        // `free` shares nothing: it runs beside the exclusive ones, so the limit comes from the category.
        let run = try await RealRun.run("""
            version: 1
            queues:
              a: {max_concurrent: 2}
              b: {max_concurrent: 2}
            tasks:
            \(tasks.joined(separator: "\n"))
              free: {run: "until [ -e order.txt ]; do sleep 0.01; done"}
            """, jobs: 4)
        let exclusive = { (task: TaskID) in task.rawValue.hasPrefix("db-") }
        #expect(run.finalStates.values.allSatisfy { $0 == .succeeded }, "\(run.finalStates)")
        #expect(run.maximumExecuting(among: exclusive) == 1)
        #expect(run.maximumExecuting() == 2)
        let expected: [TaskID] = ["db-very-high", "db-high", "db-normal", "db-low", "db-very-low"]
        #expect(run.startOrder(among: exclusive) == expected)
        #expect(run.directory.read("order.txt") == expected.map(\.rawValue).joined(separator: "\n") + "\n")
        // Those set aside show `waiting` (contract: "Task states"), and every story holds together.
        #expect(run.moves(of: "db-low") == [
            "pending -> ready", "ready -> waiting", "waiting -> ready", "ready -> waiting", "waiting -> ready",
            "ready -> waiting", "waiting -> ready", "ready -> executing", "executing -> succeeded",
        ])
        #expect(run.brokenLifecycles.isEmpty, "\(run.brokenLifecycles)")
        // The task that frees a category reports its own end first, with its exit code.
        let ended = try #require(run.transition(of: "db-very-high", to: .succeeded))
        #expect(ended.from == .executing && ended.exitCode == 0)
    }

    /// Tasks holding one, the other or both of two categories, in several priority orders: whoever
    /// starts first, the run ends, no category is ever held twice, and each category is held by some task.
    @Test(arguments: [
        ["very-high", "normal", "low", "high"],
        ["low", "very-high", "high", "normal"],
        ["normal", "high", "very-high", "low"],
    ])
    func aTaskWithTwoCategoriesNeverDeadlocks(priorities: [String]) async throws {
        let categories = [["disk", "net"], ["disk"], ["net"], ["net", "disk"]]
        let names = ["both", "disk-only", "net-only", "both-reversed"]
        let tasks = names.indices.map { index in
            "  \(names[index]): {queue: q\(index), priority: \(priorities[index]), exclusive: [\(categories[index].joined(separator: ", "))], "
                + "run: \"\(Self.command(names[index], holding: categories[index]))\"}"
        }
        let run = try await RealRun.run("""
            version: 1
            queues:
              q0: {max_concurrent: 1}
              q1: {max_concurrent: 1}
              q2: {max_concurrent: 1}
              q3: {max_concurrent: 1}
            tasks:
            \(tasks.joined(separator: "\n"))
            """, jobs: 4)
        #expect(run.finalStates == ["both": .succeeded, "disk-only": .succeeded, "net-only": .succeeded, "both-reversed": .succeeded])
        for category in ["disk", "net"] {
            let holders = Set(names.indices.filter { categories[$0].contains(category) }.map { TaskID(names[$0]) })
            #expect(run.maximumExecuting(among: holders.contains) == 1, "\(category) held twice")
        }
        // `disk-only` and `net-only` share nothing: when they are the two best, they run together.
        let best = Set(run.startOrder { _ in true }.prefix(2))
        if best == ["disk-only", "net-only"] {
            #expect(run.maximumExecuting() == 2)
        }
        #expect(run.brokenLifecycles.isEmpty, "\(run.brokenLifecycles)")
    }
}
