import ArgumentParser
import JobGraphSystem
import PipelineRun
import Reporters
#if canImport(Glibc)
import Glibc
#endif

/// Runs `jobgraph` with the process's arguments and exits with the contract's status.
public enum Entrypoint {
    /// Blocks the signals a run reads through its event loop, and SIGCHLD. Call first thing in `main`, before any
    /// thread exists, so that every later thread inherits the mask (see `SignalSet`).
    /// Becomes a session's watchdog when started as one (`SessionWatchdog`); returns at once otherwise.
    public static func serveWatchdogIfAsked() {
        SessionWatchdog.serveIfAsked(CommandLine.arguments)
    }

    /// Has malloc grow its heaps in large steps (`HeapGrowth`). Call first thing in `main`, before any other
    /// thread exists: an arena takes the setting when it is made.
    public static func prepareHeap() {
        HeapGrowth.growInLargeSteps()
    }

    public static func prepareSignals() {
        // A reader that goes away (`jobgraph run … | head -1`) must not kill jobgraph halfway through a run:
        // its tasks and services would outlive it. Writing to the closed pipe fails with EPIPE instead, which
        // the console takes quietly, and the run ends as usual.
        ProcessSignal.pipe.ignoreInThisProcess()
        do {
            try SignalSet.runControl.blockInCallingThread()
            try SignalSet.childExits.blockInCallingThread()
        } catch {
            Console.standardError.write(line: "warning: cannot block signals: \(error)")
        }
    }

    public static func main(_ arguments: [String]? = nil) async -> Never {
        // Room for the descriptors of many running tasks (see `DescriptorLimit`).
        DescriptorLimit.raise()
        do {
            var command = try JobGraphCommand.parseAsRoot(arguments)
            // A command that runs no tasks still honours Ctrl-C, SIGTERM and Ctrl-Z as usual.
            let defaultSignals = (command as? RunCommand)?.runsTasks == true ? nil : try? defaultSignalLoop()
            defer { defaultSignals?.stop() }
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            exit(ExitStatus.success)
        } catch {
            exit(exitStatus(for: error))
        }
    }

    /// Acts on blocked signals as their default actions would: exit 130 / 143, or stop. A `vars: {sh:}`
    /// command running then is ended first: it runs in a process group of its own, which the terminal's
    /// Ctrl-C does not reach.
    private static func defaultSignalLoop() throws -> EventLoop {
        try EventLoop(signals: [.interrupt, .terminate, .terminalStop]) { signal in
            switch signal {
            case .interrupt, .terminate:
                CapturedRun.killEveryRunningCommand()
                _exit(signal == .interrupt ? ExitStatus.interrupted : ExitStatus.terminated)
            default: raise(SIGSTOP)
            }
        }
    }

    /// Prints what the argument parser has to say and maps its usage failure (EX_USAGE, 64) to 2,
    /// the contract's status for an invalid command line.
    static func exitStatus(for error: Error) -> Int32 {
        if let error = error as? PipelineRunError {
            Console.standardError.write(lines: error.lines.map { "error: " + $0 })
            return ExitStatus.invalid
        }
        let code = JobGraphCommand.exitCode(for: error).rawValue
        let message = JobGraphCommand.fullMessage(for: error)
        if !message.isEmpty {
            let console = code == ExitStatus.success ? Console.standardOutput : Console.standardError
            console.write(line: message)
        }
        return code == 64 ? ExitStatus.invalid : code
    }
}
