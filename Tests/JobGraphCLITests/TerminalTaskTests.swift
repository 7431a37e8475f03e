import Foundation
import JobGraphTestSupport
import Testing

/// Tasks that use the terminal, through the binary without one (docs/pipeline.md, "Interactive tasks");
/// `Tests/tty/console.sh` (run by `TTYBoardScriptTests`) checks them in a real terminal.
@Suite(.hangLimit(minutes: 1))
struct TerminalTaskTests {
    static let pipeline = """
        version: 1
        tasks:
          build: {run: "echo built"}
          talk:
            interactive: true
            needs: [build]
            run: "read line; echo \\"heard $line\\"; echo on-stderr >&2"
          deploy:
            prompt: "Deploy to production?"
            needs: [build]
            run: "echo deployed > deployed.txt"
        """

    /// `jobgraph` run in a session of its own, with no controlling terminal, whatever the test runner has.
    private static func runWithoutTerminal(_ arguments: [String], in directory: ScratchDirectory) async throws -> JobGraphBinary.Outcome {
        let binary = try JobGraphBinary.location()
        return try await RunningJobGraph(executable: URL(fileURLWithPath: "/usr/bin/setsid"), arguments: ["-w", binary.path] + arguments,
                                         directory: directory, environment: JobGraphBinary.environment).finish()
    }

    @Test func aPromptWithNoTerminalFailsTheTaskNamingYes() async throws {
        let directory = try ScratchDirectory("jobgraph-terminal")
        defer { directory.remove() }
        try directory.write(Self.pipeline, to: "p.yaml")
        let outcome = try await Self.runWithoutTerminal(["run", "p.yaml", "deploy"], in: directory)
        #expect(outcome.status == 1, "\(outcome.standardError)")
        #expect(outcome.standardOutput.contains(
            "deploy failed: cannot ask 'Deploy to production?': no terminal; answer yes with 'run --yes'"), "\(outcome.standardOutput)")
        #expect(directory.read("deployed.txt") == nil)
    }

    /// The summary of a failed task shows its log's last lines: a task that failed at its prompt wrote none,
    /// so the lines of the run before, when it was answered yes, must not appear as this run's.
    @Test func aTaskThatFailsAtItsPromptShowsNoLinesOfAnEarlierRun() async throws {
        let directory = try ScratchDirectory("jobgraph-terminal")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              release: {prompt: "Release?", run: "echo released-earlier"}
            """, to: "p.yaml")
        let answered = try await Self.runWithoutTerminal(["run", "p.yaml", "--yes"], in: directory)
        #expect(answered.status == 0, "\(answered.standardError)")
        #expect(directory.read(".jobgraph/logs/release.log")?.contains("released-earlier") == true)
        let refused = try await Self.runWithoutTerminal(["run", "p.yaml"], in: directory)
        #expect(refused.status == 1, "\(refused.standardError)")
        #expect(refused.standardOutput.contains("release failed: cannot ask 'Release?'"), "\(refused.standardOutput)")
        #expect(!refused.standardOutput.contains("released-earlier"), "\(refused.standardOutput)")
    }

    @Test func yesAnswersThePromptWithoutAsking() async throws {
        let directory = try ScratchDirectory("jobgraph-terminal")
        defer { directory.remove() }
        try directory.write(Self.pipeline, to: "p.yaml")
        let outcome = try await Self.runWithoutTerminal(["run", "p.yaml", "deploy", "--yes"], in: directory)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(directory.read("deployed.txt") == "deployed\n")
    }

    @Test func anInteractiveTaskHasJobgraphsOwnStandardDescriptors() async throws {
        let directory = try ScratchDirectory("jobgraph-terminal")
        defer { directory.remove() }
        try directory.write(Self.pipeline, to: "p.yaml")
        try directory.write("hello there\n", to: "input.txt")
        let binary = try JobGraphBinary.location()
        // Standard input from a file: the task reads what jobgraph was given.
        let running = try RunningJobGraph(
            executable: URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", "exec \"$0\" run p.yaml talk < input.txt", binary.path],
            directory: directory, environment: JobGraphBinary.environment)
        let outcome = try await running.finish()
        #expect(outcome.status == 0, "\(outcome.standardError)")
        // Not prefixed and not captured: straight to jobgraph's standard output and error.
        #expect(outcome.outputLines.contains("heard hello there"), "\(outcome.standardOutput)")
        #expect(!outcome.standardOutput.contains("talk | "), "\(outcome.standardOutput)")
        #expect(outcome.errorLines.contains("on-stderr"), "\(outcome.standardError)")
        #expect(directory.read(".jobgraph/logs/talk.log") == "(interactive task: its output went to the terminal, not to this log)\n")
    }

    @Test func anInteractiveTaskRunsAloneOnceTheTasksRunningHaveEnded() async throws {
        let directory = try ScratchDirectory("jobgraph-terminal")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              slow: {run: "sleep 0.3"}
              other: {run: "sleep 0.3"}
              talk: {interactive: true, run: "true"}
              later: {run: "true"}
              all: {needs: [slow, other, talk, later], run: "true"}
            """, to: "p.yaml")
        let running = try JobGraphBinary.start(["run", "p.yaml", "all", "--jobs", "4", "--events", "events.jsonl"], in: directory)
        let outcome = try await running.finish()
        #expect(outcome.status == 0, "\(outcome.standardError)")
        // While `talk` executes, nothing else does: every other task ended before it started or started after it ended.
        var executing: Set<String> = []
        var overlaps: [String] = []
        for event in running.events(in: "events.jsonl") {
            guard let task = event["task"] as? String, let to = event["to"] as? String else { continue }
            if to == "executing" {
                if task == "talk" && !executing.isEmpty || task != "talk" && executing.contains("talk") { overlaps.append(task) }
                executing.insert(task)
            } else if executing.contains(task) {
                executing.remove(task)
            }
        }
        #expect(overlaps.isEmpty, "tasks executing beside 'talk': \(overlaps)")
    }

    @Test func theDryRunSaysWhichTasksPromptAndWhichAreInteractive() async throws {
        let directory = try ScratchDirectory("jobgraph-terminal")
        defer { directory.remove() }
        try directory.write(Self.pipeline, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--dry-run", "talk", "deploy"], in: directory)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardOutput.contains("prompts 'Deploy to production?', alone"), "\(outcome.standardOutput)")
        #expect(outcome.standardOutput.contains("interactive, alone"), "\(outcome.standardOutput)")
    }

    @Test func aTaskThatUsesTheTerminalCannotRunOnSlurm() async throws {
        let directory = try ScratchDirectory("jobgraph-terminal")
        defer { directory.remove() }
        try directory.write(Self.pipeline, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "--executor", "slurm", "talk"], in: directory)
        #expect(outcome.status == 2)
        #expect(outcome.errorLines.contains(
            "p.yaml:4:3: error: task 'talk' is 'interactive', which needs jobgraph's terminal; it cannot run on the Slurm executor: "
            + "run it with '--executor local'"), "\(outcome.standardError)")
    }

    @Test func aServiceCannotUseTheTerminal() async throws {
        let directory = try ScratchDirectory("jobgraph-terminal")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              server:
                service: {}
                interactive: true
                run: "sleep 1"
            """, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["validate", "p.yaml"], in: directory)
        #expect(outcome.status == 2)
        #expect(outcome.errorLines.contains(
            "p.yaml:5:5: error: a service cannot be 'interactive': it runs beside the tasks that need it, and a task that uses the terminal runs alone"),
                "\(outcome.standardError)")
    }
}
