#if canImport(Glibc)
import Glibc
#endif
import Foundation
import JobGraphBasics
import Execution
import PipelineModel

/// A job step that stays up for the whole run in allocation mode and runs the tasks it is handed, one
/// at a time, so that a task costs no `srun` of its own.
///
/// Measured (Benchmarks/slurm.sh, 200 × `sleep 0.5`, `--jobs 8`, 2 cores): a step of its own per task
/// lasted 0.585 s on average for a 0.5 s command; 8 concurrent `srun` launches and teardowns on 2 cores
/// cost about 0.085 s per task, which was the whole of the mode's overhead.
///
/// The worker is a local `srun … /bin/sh -c TaskScript.workerProgram`, run by the local executor (its own
/// process group, its output read by the event loop); requests reach it through a FIFO that is its
/// standard input, and `srun` relays them to the step. Its output is the current task's output, with the
/// task's start and end marked by lines that begin with (or, after a last line without a newline,
/// contain) the run's marker.
final class StepWorker: Sendable {
    private struct State {
        var current: WorkerTask?
        /// Claimed for a task (set before `current`, cleared with it).
        var isBusy = false
        var isAlive = true
        var nextKey = 0
        /// Its Slurm step (`1234.0`), once the step said it.
        var step: String?
    }

    private let marker: String
    /// The allocation: the only job whose status files its tasks read.
    private let job: String
    /// What `srun` gave the worker (and so each task before its own changes).
    private let environment: [String: String]
    private let fifo: String
    /// Our end of the FIFO: held read-write, so the worker's open never blocks; closing it ends the worker.
    private let requests: Locked<Int32?>
    private let state = Locked(State())
    private let ended = DispatchSemaphore(value: 0)
    private let handle = Locked<(any TaskExecution)?>(nil)
    /// Signalled once the step has said its id, or the worker ended without.
    private let named = DispatchSemaphore(value: 0)

    /// Starts the worker's `srun`; its step comes up while the run begins (requests wait in the FIFO).
    /// - Throws: when the FIFO or the local process cannot be made.
    init(index: Int, job: String, cpus: Int, srun: String, marker: String, directory: String,
         local: any TaskExecutor, environment: [String: String]) throws {
        self.marker = marker
        self.job = job
        self.environment = environment
        fifo = "\(directory)/worker-\(index).fifo"
        unlink(fifo)
        guard mkfifo(fifo, 0o600) == 0 else { throw SlurmSetupError(["cannot make the FIFO '\(fifo)': \(String(cString: strerror(errno)))"]) }
        let descriptor = open(fifo, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { throw SlurmSetupError(["cannot open the FIFO '\(fifo)': \(String(cString: strerror(errno)))"]) }
        requests = Locked(descriptor)
        let arguments = [srun, "--jobid=\(job)", "--exact", "--ntasks=1", "--nodes=1", "--cpus-per-task=\(cpus)", "--quiet",
                         "--job-name=jobgraph-worker", "/bin/sh", "-c", TaskScript.workerProgram, "jobgraph-worker", marker]
        let command = "exec " + arguments.map(TaskScript.quoted).joined(separator: " ") + " <" + TaskScript.quoted(fifo)
        let work = TaskWork(id: TaskID("slurm-worker-\(index)"), attempt: 1, work: .shell(commands: [command], concurrently: false),
                            workingDirectory: directory, environment: environment, niceness: 0, timeout: nil,
                            logPath: "\(directory)/worker-\(index).log")
        let reporter = TaskReporter(output: { [weak self] line in self?.relay(line) },
                                    finished: { [weak self] _ in self?.workerEnded() })
        do {
            let execution = try local.start(work, reporter: reporter)
            handle.withLock { $0 = execution }
        } catch {
            Glibc.close(descriptor)
            unlink(fifo)
            throw SlurmSetupError(["cannot start a worker step: \(error)"])
        }
    }

    /// Runs `work` here if the worker is idle and alive.
    /// - Returns: the attempt's handle, or `nil` when the worker is busy or gone.
    func run(_ work: TaskWork, commands: [String], concurrently: Bool, statusFile: String, reporter: TaskReporter) -> WorkerTask? {
        let key = state.withLock { state -> String? in
            guard state.isAlive, !state.isBusy else { return nil }
            state.isBusy = true
            state.nextKey += 1
            return "k\(state.nextKey)"
        }
        guard let key else { return nil }
        let taskFile = statusFile.replacingOccurrences(of: ".status", with: ".sh")
        let program = TaskScript.program(concurrently: concurrently)
        let text = TaskScript.workerTaskFile(marker: marker, key: key, work: work, workerEnvironment: environment, program: program, arguments: [statusFile] + commands)
        guard FileManager.default.createFile(atPath: taskFile, contents: Data(text.utf8)) else {
            state.withLock { $0.isBusy = false }
            return nil
        }
        let task = WorkerTask(key: key, work: work, commands: commands, statusFile: statusFile, taskFile: taskFile,
                              job: job, reporter: reporter) { [weak self] line in self?.send(line) }
        state.withLock { $0.current = task }
        task.begin()
        return task
    }

    /// Ends the worker once its current task (if any) is over: its input closes, the step ends.
    func close() {
        requests.withLock { descriptor in
            if let open = descriptor { Glibc.close(open) }
            descriptor = nil
        }
    }

    /// Waits up to `seconds` for the worker's step to say its id (`1234.0`), which it does before it runs a task.
    /// - Returns: the step's id; `nil` when the worker ended first, or the step did not come up in time.
    func waitForStep(seconds: Double) -> String? {
        if named.wait(timeout: .now() + seconds) == .success { named.signal() }  // later callers see it too
        return state.withLock(\.step)
    }

    /// Waits up to `seconds` for the worker's `srun` to end; stops it if it does not.
    func waitForEnd(seconds: Double) {
        if ended.wait(timeout: .now() + seconds) == .timedOut {
            handle.withLock { $0 }?.kill()
            _ = ended.wait(timeout: .now() + 5)
        }
        unlink(fifo)
    }

    private func send(_ line: String) {
        requests.withLock { descriptor in
            guard let descriptor else { return }
            var bytes = Array((line + "\n").utf8)
            _ = bytes.withUnsafeMutableBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        }
    }

    /// A line from the worker's `srun`: the current task's output, or a mark of its start or end.
    private func relay(_ line: String) {
        let current = state.withLock { $0.current }
        guard let range = line.range(of: marker + " ") else {
            current?.printed(line)  // between tasks: only in the worker's own log
            return
        }
        if range.lowerBound != line.startIndex { current?.printed(String(line[..<range.lowerBound])) }
        let fields = line[range.upperBound...].split(separator: " ")
        if fields.count == 2, fields[0] == "step" {
            let step = String(fields[1])
            state.withLock { $0.step = step }
            named.signal()
            return
        }
        guard fields.count == 3, let current, fields[1] == current.key, let number = Int32(fields[2]) else { return }
        if fields[0] == "pid" {
            current.started(group: number)
        } else if fields[0] == "end" {
            state.withLock { state in
                state.current = nil
                state.isBusy = false
            }
            current.ended(status: number)
        }
    }

    private func workerEnded() {
        let current = state.withLock { state -> WorkerTask? in
            state.isAlive = false
            defer { state.current = nil }
            return state.current
        }
        current?.ended(status: nil)
        close()
        named.signal()
        ended.signal()
    }
}
