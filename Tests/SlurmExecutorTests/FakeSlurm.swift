import Execution
import Foundation
import JobGraphBasics
import JobGraphSystem
import JobGraphTestSupport
import PipelineModel
import SlurmExecutor
import Steps
import TaskGraph
import Testing

/// A run of a pipeline by the Slurm executor against the fake Slurm commands of `Tests/Fixtures/fake-slurm`,
/// put first on the run's `PATH`: the executor's own logic, with real processes, without root or a cluster.
struct FakeSlurm: Sendable {
    /// The fake commands' folder.
    static let programs = Fixtures.directory.appendingPathComponent("fake-slurm").path

    /// The pipeline's folder; the fake commands keep their state in its `fake-slurm` folder.
    let directory: ScratchDirectory

    var stateDirectory: String { directory.file("fake-slurm") }

    /// Every call, as `PROGRAM ARGUMENTS…`, in order.
    var calls: [String] {
        (directory.read("fake-slurm/calls.log") ?? "").split(separator: "\n").map(String.init)
    }

    /// The arguments of each call of `program`, in order.
    func arguments(of program: String) -> [[String]] {
        calls.filter { $0.hasPrefix(program + " ") || $0 == program }.map { $0.split(separator: " ").dropFirst().map(String.init) }
    }

    /// What `squeue` reported of `job` so far, in order (`PENDING`, `RUNNING`, …).
    func reportedStates(of job: String) -> [String] {
        calls.compactMap { line in
            let fields = line.split(separator: " ")
            return fields.count == 3 && fields[0] == "squeue-said" && fields[1] == job ? String(fields[2]) : nil
        }
    }

    /// What a run showed.
    struct Run {
        var fake: FakeSlurm
        var observer: RecordingObserver
        var summary: RunSummary
        /// What the executor said when it was set up.
        var messages: [String]

        /// The executor's job of each task's last transition that carried one.
        var jobs: [String: String] {
            var jobs: [String: String] = [:]
            for transition in observer.transitions { if let job = transition.executorJob { jobs[transition.task.rawValue] = job } }
            return jobs
        }

        func output(of task: String) -> [String] {
            observer.events.compactMap { if case .output(let id, let line) = $0, id.rawValue == task { line } else { nil } }
        }

        func finalState(of task: String) -> TaskState? { observer.finalState(of: TaskID(task)) }

        func last(_ task: String) -> TaskTransition? { observer.transitions.last { $0.task.rawValue == task } }
    }

    /// Runs `yaml` on the fake cluster.
    /// - Parameters:
    ///   - environment: added to the run's environment: the fake commands' switches (`FAKE_SLURM_HOLD`, …).
    ///   - react: sees each event as it comes, with the runner (to stop it) and the fake cluster.
    static func run(_ yaml: String, mode: SlurmMode, jobs: Int = 2, environment: [String: String] = [:],
                    react: (RunEvent, Runner, FakeSlurm) async throws -> Void = { _, _, _ in }) async throws -> Run {
        let fake = FakeSlurm(directory: try ScratchDirectory("jobgraph-fake-slurm"))
        var diagnostics = Diagnostics()
        let graph = PipelineCheck.graph(yaml: yaml, file: fake.directory.file("p.yaml"), diagnostics: &diagnostics)
        #expect(diagnostics.all.isEmpty, "\(diagnostics.all)")
        let checked = try #require(graph)
        // The fake commands are found where the real ones would be: on the configuration's PATH.
        let configuration = RunConfiguration(
            jobs: jobs, pipelineDirectory: fake.directory.path, stateDirectory: fake.directory.file(".jobgraph"),
            environment: ["PATH": programs + ":/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C", "FAKE_SLURM_DIR": fake.stateDirectory]
                .merging(environment) { $1 },
            terminationGrace: 2, processorCount: 2)
        let loop = try EventLoop()
        defer { loop.stop() }
        let local = LocalExecutor(loop: loop, logDirectory: configuration.logDirectory)
        let executor = try SlurmExecutor.connect(graph: checked, mode: mode, configuration: configuration, local: local)
        let messages = Locked<[String]>([])
        let runner = Runner(graph: checked, configuration: configuration, executor: executor,
                            executorMessages: { lines in messages.withLock { $0 += lines } })
        let observer = RecordingObserver()
        let running = Task { await runner.run() }
        for await event in runner.events {
            observer.observe(event)
            try await react(event, runner, fake)
        }
        let summary = await running.value
        return Run(fake: fake, observer: observer, summary: summary, messages: messages.withLock { $0 })
    }
}
