import Execution
import JobGraphSystem
import JobGraphTestSupport
import PipelineModel
import Steps
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What an attempt reported, in order.
enum StepEvent: Sendable {
    case line(String)
    case finished(TaskResult)
}

/// A real `LocalExecutor` on a real `EventLoop`, writing logs into a scratch directory.
struct StepBench: Sendable {
    /// The environment every test child gets: small and fixed, so the host's cannot change results.
    static let environment = ["PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C"]

    let directory: ScratchDirectory
    let loop: EventLoop
    let executor: LocalExecutor

    var logDirectory: String { directory.file("logs") }

    /// The work of one attempt of task `id`, run in the scratch directory unless told otherwise.
    func work(_ commands: [String], concurrently: Bool = false, id: TaskID = "task", attempt: Int = 1,
              workingDirectory: String? = nil, environment: [String: String] = StepBench.environment,
              niceness: Int32 = 0, timeout: Double? = nil, processLimit: Int? = nil) -> TaskWork {
        TaskWork(id: id, attempt: attempt, work: .shell(commands: commands, concurrently: concurrently),
                 workingDirectory: workingDirectory ?? directory.path, environment: environment, niceness: niceness,
                 timeout: timeout, logPath: logDirectory + "/\(id.rawValue).log", processLimit: processLimit)
    }

    /// Starts `work` and returns a watch on what it reports.
    func start(_ work: TaskWork) throws -> StepWatch {
        let (events, continuation) = AsyncStream.makeStream(of: StepEvent.self, bufferingPolicy: .unbounded)
        let reporter = TaskReporter(
            output: { continuation.yield(.line($0)) },
            finished: { result in
                continuation.yield(.finished(result))
                continuation.finish()
            })
        let execution = try executor.start(work, reporter: reporter)
        return StepWatch(iterator: events.makeAsyncIterator(), execution: execution)
    }

    /// Starts `work` and waits for its end.
    func run(_ work: TaskWork) async throws -> (lines: [String], result: TaskResult?) {
        var watch = try start(work)
        let result = await watch.end()
        return (watch.lines, result)
    }

    /// Writes an executable script `name` that prints `ran`, and holds it open for writing, so that starting
    /// it fails with `ETXTBSY` until the returned descriptor is closed.
    func busyProgram(_ name: String) throws -> Int32 {
        try directory.write("#!/bin/sh\necho ran\n", to: name)
        #expect(chmod(directory.file(name), 0o755) == 0)
        let writer = open(directory.file(name), O_WRONLY | O_CLOEXEC)
        #expect(writer >= 0)
        return writer
    }

    /// The text of a task's log, `nil` when there is none.
    func log(of id: TaskID = "task") -> String? { directory.read("logs/\(id.rawValue).log") }
}

/// Runs `body` with a fresh bench, then stops the loop and removes the directory.
func withStepBench<Result>(spawner: ProcessSpawner = ProcessSpawner(),
                           _ body: (StepBench) async throws -> Result) async throws -> Result {
    let directory = try ScratchDirectory("jobgraph-steps")
    let loop = try EventLoop()
    defer {
        loop.stop()
        directory.remove()
    }
    let bench = StepBench(directory: directory, loop: loop,
                          executor: LocalExecutor(loop: loop, logDirectory: directory.file("logs"), spawner: spawner))
    return try await body(bench)
}

/// Follows one attempt: its lines as they come, then how it ended.
struct StepWatch {
    private var iterator: AsyncStream<StepEvent>.Iterator
    /// The handle to stop the attempt early.
    let execution: any TaskExecution
    private(set) var lines: [String] = []
    private(set) var result: TaskResult?

    init(iterator: AsyncStream<StepEvent>.Iterator, execution: any TaskExecution) {
        self.iterator = iterator
        self.execution = execution
    }

    /// The next line the attempt prints; `nil` once it has ended.
    mutating func nextLine() async -> String? {
        guard result == nil else { return nil }
        switch await iterator.next() {
        case .line(let line)?:
            lines.append(line)
            return line
        case .finished(let result)?:
            self.result = result
            return nil
        case nil:
            return nil
        }
    }

    /// Waits for the end, collecting the remaining lines; `nil` only if the reporter never heard of it.
    mutating func end() async -> TaskResult? {
        while await nextLine() != nil {}
        return result
    }
}

extension TaskResult {
    /// The exit code of a failure.
    var exitCode: Int32? {
        if case .failed(let code, _, _) = self { code } else { nil }
    }

    /// The reason of a failure, empty for a success.
    var reason: String {
        if case .failed(_, let reason, _) = self { reason } else { "" }
    }
}
