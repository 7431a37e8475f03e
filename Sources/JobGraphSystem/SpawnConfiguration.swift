/// Everything a child process starts with.
public struct SpawnConfiguration: Hashable, Sendable {
    /// The file to exec: absolute, or relative to `workingDirectory`.
    public var executablePath: String
    /// The argument vector, `arguments[0]` being the program's name as the user wrote it.
    public var arguments: [String]
    /// The complete environment, as `NAME=value` entries; nothing is inherited implicitly.
    public var environment: [String]
    /// The directory the child starts in; `nil` keeps the parent's.
    public var workingDirectory: String?
    /// Niceness 0 (normal) to 19 (lowest priority) for the child's whole process group (CONTRACT.md:
    /// background 19, utility 10, others 0). Values below this process's own need privilege.
    public var niceness: CInt

    /// A configuration; see each property.
    public init(
        executablePath: String, arguments: [String], environment: [String],
        workingDirectory: String? = nil, niceness: CInt = 0
    ) {
        self.executablePath = executablePath
        self.arguments = arguments
        self.environment = environment
        self.workingDirectory = workingDirectory
        self.niceness = niceness
    }
}
