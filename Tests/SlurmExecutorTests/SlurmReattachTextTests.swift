import Execution
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
        #expect(SlurmExecutor.count(1, "Slurm job") == "1 Slurm job")
        #expect(SlurmExecutor.count(3, "job") == "3 jobs")
    }
}
