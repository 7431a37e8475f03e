/// A started child: its id (which is also its process group's id) and the descriptors to watch it by.
///
/// The caller owns the descriptors until it passes the value to `EventLoop.watch`, which then closes them;
/// a child that is never watched must be given to `closeDescriptors()` (and reaped by other means).
public struct ChildProcess: Hashable, Sendable {
    /// The child's process id, equal to its process group id.
    public let id: ProcessID
    /// The read end of the pipe that carries the child's standard output and standard error
    /// (non-blocking, close-on-exec).
    public let output: FileDescriptor
    /// A pidfd for the child: readable once it has exited, and a handle no pid reuse can confuse.
    public let exitDescriptor: FileDescriptor
    /// A write end of the output pipe that this process holds, when the spawner was asked to
    /// (`ProcessSpawner.holdsOutputOpen`): no end of file comes before it is closed.
    public let heldOutput: FileDescriptor?

    public init(id: ProcessID, output: FileDescriptor, exitDescriptor: FileDescriptor, heldOutput: FileDescriptor? = nil) {
        self.id = id
        self.output = output
        self.exitDescriptor = exitDescriptor
        self.heldOutput = heldOutput
    }

    /// Closes the descriptors, for a child that will not be watched.
    public func closeDescriptors() {
        output.closeIgnoringErrors()
        exitDescriptor.closeIgnoringErrors()
        heldOutput?.closeIgnoringErrors()
    }
}
