import Execution
import Foundation
import PipelineModel
import Testing
@testable import StateStore

/// The ledger of Slurm jobs (`slurm_runs`, `slurm_jobs`): what a run wrote down is what the next run of
/// its pipeline finds, until someone releases it; another pipeline's runs are not found.
@Suite struct StateStoreSlurmJobsTests {
    let start = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func aKilledRunsJobsAreFoundByTheNextRunUntilReleased() throws {
        let store = try StateStore.inMemory(directory: "/project")
        let ledger = store.jobLedger(pipelineFile: "ci.yaml")
        let killed = try store.beginRun(pipelineFile: "ci.yaml", startTime: start, taskCount: 2)
        try ledger.begin(token: "k1")
        let first = SubmittedJob(runToken: "k1", job: "12", task: "a", attempt: 1, statusFile: "/project/.jobgraph/slurm/a.1.k1.status")
        let second = SubmittedJob(runToken: "k1", job: "13_0", task: "b[0]", attempt: 1, statusFile: "/project/.jobgraph/slurm/b_0_.1.k1.status",
                                  definition: "d1")
        // An allocation mode run's allocation and its worker steps, with their kinds.
        let allocation = SubmittedJob(runToken: "k1", job: "14", definition: "d2")
        let step = SubmittedJob(runToken: "k1", job: "14.0", kind: .workerStep)
        #expect(first.kind == .batchJob && allocation.kind == .allocation && step.kind == .workerStep)
        try ledger.submitted([first])
        try ledger.submitted([second])
        try ledger.submitted([allocation])
        try ledger.submitted([step])
        var ended = first
        (ended.schedulerState, ended.exitCode, ended.outcome) = ("FAILED", 3, .failed)
        try ledger.ended(ended)
        // Another pipeline in the folder has runs of its own.
        _ = try store.beginRun(pipelineFile: "other.yaml", startTime: start, taskCount: 1)
        try store.jobLedger(pipelineFile: "other.yaml").begin(token: "o1")

        let next = try store.beginRun(pipelineFile: "ci.yaml", startTime: start + 60, taskCount: 2)
        try ledger.begin(token: "n1")
        #expect(try ledger.unreleasedRuns(except: "n1") == [LedgerRun(token: "k1", run: killed.rawValue, jobs: [ended, second, allocation, step])])
        #expect(try ledger.unreleasedRuns(except: "k1").map(\.run) == [next.rawValue])
        try ledger.release(["k1", "n1"])
        #expect(try ledger.unreleasedRuns(except: "").isEmpty)
        #expect(try store.jobLedger(pipelineFile: "other.yaml").unreleasedRuns(except: "").map(\.token) == ["o1"])
    }

    @Test func aJobWrittenDownBeforeItsSubmissionIsReplacedByItsId() throws {
        let store = try StateStore.inMemory(directory: "/project")
        let ledger = store.jobLedger(pipelineFile: "ci.yaml")
        _ = try store.beginRun(pipelineFile: "ci.yaml", startTime: start, taskCount: 2)
        try ledger.begin(token: "k1")
        let status = "/project/.jobgraph/slurm/a.1.k1.status"
        let intent = SubmittedJob(runToken: "k1", job: SubmittedJob.intendedID(index: 0, of: 1, statusFile: status), task: "a", attempt: 1,
                                  statusFile: status, definition: "d1")
        #expect(intent.job == "?0/1 a.1.k1.status" && intent.intended! == (0, 1))
        let other = SubmittedJob(runToken: "k1", job: SubmittedJob.intendedID(index: 2, of: 3, statusFile: "/p/b_2_.1.k1.status"), task: "b[2]",
                                 attempt: 1, statusFile: "/p/b_2_.1.k1.status")
        #expect(other.intended! == (2, 3))
        try ledger.submitting([intent, other])
        // Killed before the answer: the next run finds what was about to be submitted.
        #expect(try ledger.unreleasedRuns(except: "n1").first?.jobs == [intent, other])
        var submitted = intent
        submitted.job = "12"
        #expect(submitted.intended == nil)
        try ledger.submitted([submitted])
        #expect(try ledger.unreleasedRuns(except: "n1").first?.jobs == [other, submitted])
    }
}
