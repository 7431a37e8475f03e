/// Everything a child process starts with.
public struct SpawnConfiguration: Hashable, Sendable {
    /// The file to exec: absolute, or relative to `workingDirectory`.
    public var executablePath: String
    /// The argument vector, `arguments[0]` being the program's name as the user wrote it.
    public var arguments: [String]
    /// The complete environment, as `NAME=value` entries, after those of `sharedEnvironment`; nothing is
    /// inherited implicitly.
    public var environment: [String]
    /// Entries encoded once for many children, which come first; `nil` for none.
    public var sharedEnvironment: EnvironmentBlock?
    /// The directory the child starts in; `nil` keeps the parent's.
    public var workingDirectory: String?
    /// Niceness 0 (normal) to 19 (lowest priority) for the child's whole process group (CONTRACT.md:
    /// background 19, utility 10, others 0). Values below this process's own need privilege.
    public var niceness: CInt
    /// The child keeps this process's descriptors 0–2 instead of `/dev/null` and the output pipe (an
    /// interactive task); the pipe is still made, for the event loop to watch, but nothing writes to it.
    public var inheritsStandardDescriptors = false
    /// A terminal descriptor (see `TerminalForeground`) whose foreground the child's process group takes
    /// before its exec; `nil` leaves the terminal alone.
    public var foregroundTerminal: CInt?
    /// A descriptor numbered 3 or above that becomes the child's standard error, apart from its output
    /// (`CapturedRun`); `nil` sends standard error to the output pipe.
    public var errors: FileDescriptor?

    /// A configuration; see each property.
    public init(
        executablePath: String, arguments: [String], environment: [String], sharedEnvironment: EnvironmentBlock? = nil,
        workingDirectory: String? = nil, niceness: CInt = 0
    ) {
        self.executablePath = executablePath
        self.arguments = arguments
        self.environment = environment
        self.sharedEnvironment = sharedEnvironment
        self.workingDirectory = workingDirectory
        self.niceness = niceness
    }
}
