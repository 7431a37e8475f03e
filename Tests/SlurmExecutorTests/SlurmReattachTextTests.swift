import Execution
import PipelineModel
@testable import SlurmExecutor
import Testing

/// What the takeover of a killed run's jobs reads from `squeue` and says (the takeover itself is tested on a
/// real cluster: Tests/JobGraphCLITests/SlurmReattachTests).
@Suite struct SlurmReattachTextTests {
    @Test func aPendingArrayNotYetSplitAnswersForEachOfItsItems() {
        let queued = QueuedJobs(states: ["12": "RUNNING", "13_[2-3]": "PENDING", "13_0": "RUNNING", "13_1": "COMPLETED", "14": "CANCELLED"])
        #expect(queued.state(of: "12") == "RUNNING")
        #expect(queued.state(of: "13_1") == "COMPLETED")
        #expect(queued.state(of: "13_3") == "PENDING")
        #expect(queued.state(of: "15") == nil)
        #expect(queued.liveJobs == ["12", "13", "13_0"])
    }

    @Test func theLineNamesTheRunsThatDied() {
        #expect(SlurmExecutor.died([LedgerRun(token: "a", run: 7, jobs: [])]) == "run 7 died")
        #expect(SlurmExecutor.died([LedgerRun(token: "a", run: 5, jobs: []), LedgerRun(token: "b", run: 6, jobs: []),
                                    LedgerRun(token: "c", run: nil, jobs: [])]) == "runs 5, 6 and ? died")
    }

    /// A run killed between `sbatch`'s answer and writing it down: the job it was about to submit is found
    /// by the run's job name and its comment, the latest not written down; an array's item by its index.
    @Test func jobsTheKilledRunDidNotWriteDownAreFoundByNameAndComment() {
        func intent(_ task: TaskID, _ index: Int, of count: Int, attempt: Int = 1) -> SubmittedJob {
            let status = "/p/\(task.rawValue).\(attempt).k1.status"
            return SubmittedJob(runToken: "k1", job: SubmittedJob.intendedID(index: index, of: count, statusFile: status), task: task,
                                attempt: attempt, statusFile: status)
        }
        let written = SubmittedJob(runToken: "k1", job: "20", task: "a", attempt: 1, statusFile: "/p/a.1.k1.status", outcome: .failed)
        var refused = intent("c", 0, of: 1)
        refused.outcome = .failed
        let run = LedgerRun(token: "k1", run: 1, jobs: [written, intent("a", 0, of: 1, attempt: 2), intent("m[0]", 0, of: 2),
                                                         intent("m[1]", 1, of: 2), refused, intent("gone", 0, of: 1)])
        var queued = QueuedJobs(states: ["20": "FAILED", "21": "RUNNING", "22_[0-1]": "PENDING", "23": "RUNNING", "30": "RUNNING"])
        queued.described = ["20": ("jobgraph-k1", "a"), "21": ("jobgraph-k1", "a"), "22_[0-1]": ("jobgraph-k1", "m"),
                            "23": ("jobgraph-k1", "c"), "30": ("jobgraph-other", "gone")]
        let result = SlurmExecutor.findingIntendedJobs(of: [run], queued: queued)
        let found: [SubmittedJob] = result.found
        #expect(found.map { $0.job } == ["21", "22_0", "22_1"])
        #expect(found.map { $0.statusFile ?? "" } == ["/p/a.2.k1.status", "/p/m[0].1.k1.status", "/p/m[1].1.k1.status"])
        // The refused one (Slurm said no) and the one never submitted are left out; their tasks run again.
        #expect(result.runs.first?.jobs.map { $0.job } == ["20", "21", "22_0", "22_1"])
    }
}
