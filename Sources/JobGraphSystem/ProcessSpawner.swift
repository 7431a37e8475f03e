import CSpawn
import Glibc

/// Starts child processes, each in its own process group, with output on one pipe.
///
/// Each child gets: stdin from `/dev/null`; stdout and stderr together on a new pipe; no other descriptor
/// (every descriptor this module opens is close-on-exec, and the child closes the rest); its own process
/// group, so one `kill(-pgid)` reaches its grandchildren; an empty signal mask and default actions for every
/// signal, even though this process blocks the run-control signals (`SignalSet`). Safe from any thread. The
/// child is cloned with `CLONE_VM | CLONE_VFORK`, as `posix_spawn` does, so no memory is copied however large
/// this process is; `jobgraph_spawn` (the CSpawn module) says why it is not `posix_spawn` itself.
public struct ProcessSpawner: Sendable {
    /// The shell for commands that need one.
    public static let defaultShell = "/bin/sh"

    /// The program cache, shared by every copy of this spawner.
    public let locator: ProgramLocator
    /// The shell `spawn(command:…)` uses for text with shell syntax.
    public var shell: String
    /// Whether each child's `heldOutput` keeps a write end of its output pipe in this process, for an
    /// `EventLoop` to close when it sees the child exit. The pipe's end of file then comes with the exit,
    /// and the loop wakes once per child where it woke twice (end of file, then the pidfd: a context switch
    /// on a busy core, for every task). Off by default: a caller that reads the output to its end itself
    /// would wait forever.
    public var holdsOutputOpen = false
    /// How long a caller that gets `textFileBusy` (`BusyProgram.report`) keeps trying again before it lets the
    /// shell say why the program cannot run. The window it waits out closes within milliseconds; a test that
    /// holds a program open from a thread that may be starved for a while raises it.
    public var busyPatience = Duration.milliseconds(512)

    /// What `spawn(command:…)` does when the program is busy (`ETXTBSY`): some process still holds it open
    /// for writing, typically a child forked elsewhere while the file was being written, between its fork
    /// and its exec. That window closes within milliseconds; nothing here waits it out.
    public enum BusyProgram: Sendable {
        /// Throw `textFileBusy` at once, for the caller to try again later, from a timer.
        case report
        /// Start the shell instead, which says "Text file busy" and exits 126 as `execvp` would: the last try.
        case runShell
    }

    /// A spawner with its own program cache and `/bin/sh`.
    public init(locator: ProgramLocator = ProgramLocator(), shell: String = ProcessSpawner.defaultShell) {
        self.locator = locator
        self.shell = shell
    }

    /// Starts a `run:` command line: exec'd directly when `ShellCommand` finds no shell syntax, else with
    /// `shell -c command`.
    ///
    /// The program is looked up in the `PATH` of `environment`. A program that is missing, not executable or
    /// not an executable format falls back to the shell, so the user sees the shell's usual message and
    /// status (127 or 126), exactly as if the command had gone through the shell from the start.
    /// - Parameters:
    ///   - command: the command text.
    ///   - environment: the child's complete environment, `NAME=value`, after the entries of `sharedEnvironment`.
    ///   - sharedEnvironment: entries encoded once for many children, which come first.
    ///   - workingDirectory: where it starts; `nil` keeps this process's directory.
    ///   - niceness: 0–19 (see `SpawnConfiguration.niceness`).
    ///   - whenBusy: what a busy program leads to (see `BusyProgram`).
    /// - Throws: `SystemError` when even the shell cannot be started (no pipe, no memory, no shell), or
    ///   `textFileBusy` for a busy program when `whenBusy` is `.report`.
    public func spawn(
        command: String, environment: [String], sharedEnvironment: EnvironmentBlock? = nil,
        workingDirectory: String? = nil, niceness: CInt = 0, whenBusy: BusyProgram = .runShell,
        terminal: TerminalAccess = .none
    ) throws(SystemError) -> ChildProcess {
        if case .direct(let words) = ShellCommand(command), let program = words.first,
           let path = program.utf8.contains(UInt8(ascii: "/")) ? program
               : locator.locate(program, searchPath: searchPath(in: environment, shared: sharedEnvironment)) {
            do throws(SystemError) {
                return try spawn(terminal.applied(to: SpawnConfiguration(
                    executablePath: path, arguments: words, environment: environment, sharedEnvironment: sharedEnvironment,
                    workingDirectory: workingDirectory, niceness: niceness)))
            } catch where error.call == "posix_spawn" && Self.shellExplainsBetter(error.errno)
                            && !(error.errno == .textFileBusy && whenBusy == .report) {
                // Fall through to the shell, which prints "not found" or "Permission denied" and exits
                // 127 or 126, or runs a script without a #! line, as `execvp` would.
            }
        }
        return try spawn(terminal.applied(to: SpawnConfiguration(
            executablePath: shell, arguments: [shell, "-c", command], environment: environment,
            sharedEnvironment: sharedEnvironment, workingDirectory: workingDirectory, niceness: niceness)))
    }

    /// What a child gets of this process's terminal.
    public enum TerminalAccess: Sendable {
        /// `/dev/null` for input, the output pipe for output: a task's usual lot.
        case none
        /// Descriptors 0–2 as this process has them, and the terminal's foreground on `descriptor` when given
        /// (`TerminalForeground.descriptor()`): an interactive task.
        case inherited(foreground: CInt?)

        func applied(to configuration: SpawnConfiguration) -> SpawnConfiguration {
            guard case .inherited(let foreground) = self else { return configuration }
            var configuration = configuration
            configuration.inheritsStandardDescriptors = true
            configuration.foregroundTerminal = foreground
            return configuration
        }
    }

    /// Starts the program `configuration` describes.
    ///
    /// A child with a niceness sets it itself, between its clone and its exec (see `jobgraph_spawn`), so the
    /// program runs niced from its first instruction and nothing waits for it here. Setting it afterwards
    /// with `setpriority(PRIO_PGRP)` raced with the exec: a quick program (`nice` itself) ran at 0.
    /// - Returns: the running child; the caller owns its descriptors (see `ChildProcess`).
    /// - Throws: `SystemError` whose `subject` is the executable path: `ENOENT`, `EACCES`, `ENOEXEC`,
    ///   `ETXTBSY` and the like from `posix_spawn`, `EINVAL` for an argument holding a NUL byte, a failure to create the pipe
    ///   or pidfd (in which case the child is killed and reaped first), or from `setpriority` a niceness
    ///   below the calling thread's own.
    public func spawn(_ configuration: SpawnConfiguration) throws(SystemError) -> ChildProcess {
        let program = configuration.executablePath
        guard let argv = CStringArray(configuration.arguments), let ownEnvironment = CStringArray(configuration.environment)
        else { throw SystemError("posix_spawn", errno: .invalidArgument, subject: program) }

        let input = try Self.nullDevice.get()
        let pipe = try FileDescriptor.makePipe()
        let pid: pid_t
        do throws(SystemError) {
            try pipe.readEnd.setOnlyNonBlocking()
            pid = try withEnvironment(configuration.sharedEnvironment, adding: ownEnvironment,
                                      count: configuration.environment.count) { envp throws(SystemError) in
                try Self.spawnOnce(program, arguments: argv.pointers, environment: envp, output: pipe.writeEnd,
                                   errors: configuration.errors, input: input, workingDirectory: configuration.workingDirectory,
                                   niceness: configuration.niceness, inherits: configuration.inheritsStandardDescriptors,
                                   terminal: configuration.foregroundTerminal)
            }
        } catch {
            pipe.readEnd.closeIgnoringErrors()
            pipe.writeEnd.closeIgnoringErrors()
            throw error
        }
        // Unless held, only the child keeps the write end; once it (and its descendants) exit, reading gives EOF.
        let heldOutput = holdsOutputOpen ? pipe.writeEnd : nil
        if !holdsOutputOpen { pipe.writeEnd.closeIgnoringErrors() }

        do throws(SystemError) {
            let pidfdOpen = try LinuxCalls.require(LinuxCalls.pidFDOpen, "pidfd_open")
            // The pid cannot be reused before we reap it, so opening the pidfd after the spawn is race-free.
            let exitDescriptor = FileDescriptor(rawValue: try sys("pidfd_open", subject: program) { pidfdOpen(pid, 0) })
            return ChildProcess(id: ProcessID(rawValue: pid), output: pipe.readEnd, exitDescriptor: exitDescriptor,
                                heldOutput: heldOutput)
        } catch {
            // A child we cannot watch must not run on unobserved.
            kill(-pid, SIGKILL)
            var status: CInt = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            pipe.readEnd.closeIgnoringErrors()
            heldOutput?.closeIgnoringErrors()
            throw error
        }
    }

    /// One `jobgraph_spawn`; its errors carry the name `posix_spawn`, whose contract it keeps.
    private static func spawnOnce(
        _ program: String, arguments: UnsafePointer<UnsafeMutablePointer<CChar>?>,
        environment: UnsafePointer<UnsafeMutablePointer<CChar>?>, output: FileDescriptor, errors: FileDescriptor?,
        input: FileDescriptor, workingDirectory: String?, niceness: CInt, inherits: Bool, terminal: CInt?
    ) throws(SystemError) -> pid_t {
        var pid: pid_t = 0
        var nicenessFailed: CInt = 0
        let result = program.withCString { path in
            withOptionalCString(workingDirectory) { directory in
                var request = jobgraph_spawn_request(path: path, arguments: arguments, environment: environment,
                                                     output: output.rawValue, errors: errors?.rawValue ?? -1,
                                                     input: input.rawValue, directory: directory,
                                                     niceness: niceness, inherits_standard_descriptors: inherits ? 1 : 0,
                                                     terminal: terminal ?? -1)
                return jobgraph_spawn(&request, &pid, &nicenessFailed)
            }
        }
        if result == 0 { return pid }
        throw SystemError(nicenessFailed != 0 ? "setpriority" : "posix_spawn", errno: Errno(rawValue: result), subject: program)
    }

    /// `/dev/null`, opened once for every child's standard input, at descriptor 3 or above (which
    /// `jobgraph_spawn` needs) and close-on-exec. Never closed: it lives as long as the process may spawn.
    private static let nullDevice = Result { () throws(SystemError) -> FileDescriptor in
        let opened = try sys("open", subject: "/dev/null") { open("/dev/null", O_RDONLY | O_CLOEXEC) }
        // This process may have started with 0–2 closed: out of the child's way.
        return try FileDescriptor(rawValue: opened).numberedAboveStandardDescriptors()
    }

    /// Calls `body` with the `envp` of `shared`'s entries followed by `own`'s.
    private func withEnvironment<Result>(
        _ shared: EnvironmentBlock?, adding own: borrowing CStringArray, count: Int,
        _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) throws(SystemError) -> Result
    ) throws(SystemError) -> Result {
        guard let shared else { return try body(own.pointers) }
        return try shared.withPointers(adding: own, count: count, body)
    }

    private static func withOptionalCString<Result>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> Result) -> Result {
        guard let string else { return body(nil) }
        return string.withCString { body($0) }
    }

    /// Statuses for which `sh -c` gives the user the familiar message and exit status.
    private static func shellExplainsBetter(_ errno: Errno) -> Bool {
        errno == .noSuchFileOrDirectory || errno == .permissionDenied || errno == .notExecutableFormat
            || errno == .notDirectory || errno == .isDirectory || errno == .textFileBusy
    }

    /// The `PATH` entry of `environment`, else of `shared`, or `execvp`'s default.
    private func searchPath(in environment: [String], shared: EnvironmentBlock?) -> String {
        ProgramLocator.searchPath(in: environment) ?? shared?.searchPath ?? ProgramLocator.defaultSearchPath
    }
}
