import ArgumentParser
import Reporters
#if canImport(Glibc)
import Glibc
#endif

/// Runs `jobgraph` with the process's arguments and exits with the contract's status.
public enum Entrypoint {
    public static func main(_ arguments: [String]? = nil) async -> Never {
        do {
            var command = try JobGraphCommand.parseAsRoot(arguments)
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

    /// Prints what the argument parser has to say and maps its usage failure (EX_USAGE, 64) to 2,
    /// the contract's status for an invalid command line.
    static func exitStatus(for error: Error) -> Int32 {
        let code = JobGraphCommand.exitCode(for: error).rawValue
        let message = JobGraphCommand.fullMessage(for: error)
        if !message.isEmpty {
            let console = code == ExitStatus.success ? Console.standardOutput : Console.standardError
            console.write(line: message)
        }
        return code == 64 ? ExitStatus.invalid : code
    }
}
