#if canImport(Glibc)
import Glibc
#endif
import JobGraphBasics
import JobGraphSystem

/// The temporary file a download streams into, in the destination's own folder so that the final
/// `rename` is atomic: a reader of the destination sees the old file or the whole new one, never a part.
///
/// Not thread-safe: its owner serialises every call (the download step holds it inside its lock). The
/// descriptor is owned here and closed by `commit()` or `discard()`, whichever comes first.
final class PartialFile {
    let destination: String
    /// `.NAME.part-XXXXXX` beside the destination; hidden, so globs over the folder do not pick it up.
    let path: String
    private var descriptor: Int32

    private init(destination: String, path: String, descriptor: Int32) {
        self.destination = destination
        self.path = path
        self.descriptor = descriptor
    }

    /// Creates the destination's folder if missing, then an empty temporary file in it.
    static func create(beside destination: String) throws(DownloadFailure) -> PartialFile {
        let slash = destination.lastIndex(of: "/")
        let folder = slash.map { String(destination[..<$0]) } ?? "."
        let name = slash.map { String(destination[destination.index(after: $0)...]) } ?? destination
        guard !name.isEmpty else { throw .file("cannot download to '\(destination)': it names a folder, not a file") }
        try createFolders(folder.isEmpty ? "/" : folder)
        // O_EXCL on a random name rather than mkstemp: O_CLOEXEC from the start, so a child spawned at
        // that moment by another task never inherits the descriptor.
        for _ in 0..<16 {
            let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
            let path = "\(folder)/.\(name).part-\(suffix)"
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if descriptor >= 0 { return PartialFile(destination: destination, path: path, descriptor: descriptor) }
            guard errno == EEXIST else { throw .file("cannot create a file in '\(folder)': \(systemMessage())") }
        }
        throw .file("cannot create a file in '\(folder)': every temporary name tried exists")
    }

    /// Appends all of `bytes`.
    func write(_ bytes: UnsafeRawBufferPointer) throws(DownloadFailure) {
        if let code = FileCalls.writeAll(bytes, to: descriptor) { throw .file("cannot write '\(path)': \(Errno(rawValue: code))") }
    }

    /// Flushes the data to disk, closes the file and renames it to the destination, then flushes the
    /// folder so that the rename itself survives a crash.
    func commit() throws(DownloadFailure) {
        guard descriptor >= 0 else { throw .file("cannot finish '\(path)': already closed") }
        let synced = fsync(descriptor) == 0 ? nil : systemMessage()
        let closed = Glibc.close(descriptor) == 0 ? nil : systemMessage()
        descriptor = -1
        if let problem = synced ?? closed {
            _ = unlink(path)
            throw .file("cannot write '\(path)': \(problem)")
        }
        guard rename(path, destination) == 0 else {
            let message = systemMessage()
            _ = unlink(path)
            throw .file("cannot move the download into place at '\(destination)': \(message)")
        }
        let folder = destination.lastIndex(of: "/").map { String(destination[..<$0]) } ?? "."
        let folderDescriptor = open(folder.isEmpty ? "/" : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderDescriptor >= 0 {
            _ = fsync(folderDescriptor)   // best effort: the file itself is complete and in place already
            _ = Glibc.close(folderDescriptor)
        }
    }

    /// Closes and removes the temporary file.
    func discard() {
        if descriptor >= 0 {
            _ = Glibc.close(descriptor)
            descriptor = -1
        }
        _ = unlink(path)
    }

    private static func createFolders(_ folder: String) throws(DownloadFailure) {
        if let (current, code) = FileCalls.createFolders(folder) {
            throw .file("cannot create the folder '\(current)': \(Errno(rawValue: code))")
        }
    }
}

/// `strerror` of the current `errno`.
private func systemMessage() -> String {
    String(cString: strerror(errno))
}
