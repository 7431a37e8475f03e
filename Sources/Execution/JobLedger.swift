import PipelineModel
import Foundation

/// Where an executor that hands work to a scheduler (Slurm) writes down each job as it submits it, before
/// the next, and where the run after a killed one finds the jobs that run left behind (docs/pipeline.md,
/// "Reattach"). The state store keeps it in `state.db`. Calls block until written; safe from any thread.
public protocol JobLedger: Sendable {
    /// A run begins; `token` names its jobs. Before its first submission.
    func begin(token: String) throws
    /// Jobs about to be submitted, whose ids are not known yet (`SubmittedJob.intendedID`): written before
    /// the submission, so that a run killed before it wrote the answer down leaves the next one enough to
    /// find the job by its name and comment, and take it over.
    func submitting(_ jobs: [SubmittedJob]) throws
    /// Jobs just submitted; each replaces the row `submitting` wrote for its status file.
    func submitted(_ jobs: [SubmittedJob]) throws
    /// How a job ended, as its run saw it.
    func ended(_ job: SubmittedJob) throws
    /// The runs of this pipeline that nobody has released, but the one of `token`, oldest first.
    func unreleasedRuns(except token: String) throws -> [LedgerRun]
    /// Nothing of these runs is left on the scheduler for a later run to find: they ended, or a later run took over.
    func release(_ tokens: [String]) throws
}

/// One job a run submitted: a task's attempt, the run's allocation, or a worker step in it.
public struct SubmittedJob: Sendable, Equatable {
    /// What the job is; the raw values are `slurm_jobs.kind`'s.
    public enum Kind: String, Sendable {
        case allocation
        /// A long-lived step in the allocation that runs tasks (`1234.0`).
        case workerStep = "worker-step"
        case batchJob = "batch-job"
    }

    /// The run's token: its jobs are named `jobgraph-TOKEN`, its attempt files carry it.
    public var runToken: String
    /// The scheduler's id: `1234`, an array item's `1234_7`, a step's `1234.0`.
    public var job: String
    public var kind: Kind
    /// The task whose attempt the job runs; `nil` for the run's allocation.
    public var task: TaskID?
    public var attempt: Int?
    /// Where the job writes how its commands ended.
    public var statusFile: String?
    /// Once the run saw the job end: the scheduler's state (`COMPLETED`, `OUT_OF_MEMORY`) when known,
    /// the exit code, and the state the attempt ended in.
    public var schedulerState: String?
    public var exitCode: Int32?
    public var outcome: TaskState?
    /// What the job runs, as a digest: a batch job's task definition (its commands), the allocation's request.
    /// A later run takes the job over only when its own digest is the same; `nil` when not recorded.
    public var definition: String?

    /// The id written down for job `index` (0 for a lone job) of a submission of `count` jobs (an array's items)
    /// before the scheduler gave it one: `?0/1 a.1.TOKEN.status`. Unique in the run, as the status file is.
    public static func intendedID(index: Int, of count: Int, statusFile: String) -> String {
        "?\(index)/\(count) " + (statusFile.split(separator: "/").last.map(String.init) ?? statusFile)
    }

    /// For a job written down before its submission (`intendedID`): its index in the submission, and how many
    /// jobs the submission had (more than one: an array, whose item `index` the job is).
    public var intended: (index: Int, count: Int)? {
        guard job.hasPrefix("?"), let space = job.firstIndex(of: " ") else { return nil }
        let numbers = job[job.index(after: job.startIndex)..<space].split(separator: "/")
        guard numbers.count == 2, let index = Int(numbers[0]), let count = Int(numbers[1]) else { return nil }
        return (index, count)
    }

    /// - Parameter kind: by default a batch job when `task` is set, else the allocation.
    public init(runToken: String, job: String, kind: Kind? = nil, task: TaskID? = nil, attempt: Int? = nil, statusFile: String? = nil,
                schedulerState: String? = nil, exitCode: Int32? = nil, outcome: TaskState? = nil, definition: String? = nil) {
        (self.runToken, self.job, self.task, self.attempt, self.statusFile) = (runToken, job, task, attempt, statusFile)
        self.kind = kind ?? (task != nil ? .batchJob : job.contains(".") ? .workerStep : .allocation)
        (self.schedulerState, self.exitCode, self.outcome, self.definition) = (schedulerState, exitCode, outcome, definition)
    }
}

/// A run whose jobs nobody has taken over: killed, or still going on under its lock.
public struct LedgerRun: Sendable, Equatable {
    public var token: String
    /// Its number in the history; `nil` once the history dropped it.
    public var run: Int64?
    /// Its jobs, in the order it submitted them.
    public var jobs: [SubmittedJob]

    public init(token: String, run: Int64?, jobs: [SubmittedJob]) {
        (self.token, self.run, self.jobs) = (token, run, jobs)
    }
}
