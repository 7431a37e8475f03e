#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import JobGraphBasics

/// Whether every path a replay record examined still has the status the recorded run saw: the last and
/// costliest check of a replay, one `stat` per path.
///
/// Why not `stat(path)` one path after another: the kernel walks every component of an absolute path
/// on each call. 10,000 outputs under `/dev/shm/…/out/` took 16 ms that way and 11 ms as `fstatat` in
/// their folder, opened once (a C loop on this 2-core machine); the record keeps a folder's files
/// together (`NoOpReplayRecord.body`). And a large record is checked in parts on the machine's cores,
/// with the first changed path stopping them all.
enum ExaminedPathCheck {
    /// The least paths a part checks: a record of fewer than two parts' worth is checked on the calling thread.
    static let pathsPerPart = 2048

    /// - Parameter stop: set by the caller when the answer is no longer wanted: the check then stops soon,
    ///   answering `false`. The parts set it too, when one finds a change.
    static func allUnchanged(_ paths: [NoOpReplayRecord.ExaminedPath], unlessStopped stop: Locked<Bool> = Locked(false)) -> Bool {
        // The processor count reads cgroup files: asked only for a record of two parts' worth or more.
        guard paths.count >= 2 * pathsPerPart else { return allUnchanged(paths[...], unlessStopped: stop) }
        let parts = min(paths.count / pathsPerPart, ProcessInfo.processInfo.activeProcessorCount, 8)
        guard parts > 1 else { return allUnchanged(paths[...], unlessStopped: stop) }
        let partSize = (paths.count + parts - 1) / parts
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            let slice = paths[min(paths.count, part * partSize)..<min(paths.count, (part + 1) * partSize)]
            if !allUnchanged(slice, unlessStopped: stop) { stop.withLock { $0 = true } }
        }
        return !stop.withLock { $0 }
    }

    /// - Parameter stop: set by another part that found a change; this one then gives up (`false`).
    private static func allUnchanged(_ paths: ArraySlice<NoOpReplayRecord.ExaminedPath>, unlessStopped stop: Locked<Bool>) -> Bool {
        var folder = OpenFolder()
        defer { folder.close() }
        for (index, examined) in zip(paths.indices, paths) {
            if index & 255 == 0, stop.withLock({ $0 }) { return false }
            if status(of: examined.path, in: &folder) != examined.status { return false }
        }
        return true
    }

    /// `stat(path)`, relative to the path's folder kept open in `folder` while the paths stay in it.
    private static func status(of path: String, in folder: inout OpenFolder) -> FileStatus? {
        let utf8 = path.utf8
        guard let slash = utf8.lastIndex(of: UInt8(ascii: "/")), slash != utf8.startIndex, utf8.index(after: slash) != utf8.endIndex
        else { return FileStatus(path: path) }  // a name in the working folder, at the root, or ending in `/`
        let folderPath = path[..<slash]
        if folder.path != folderPath {
            folder.close()
            folder.path = folderPath
            folder.descriptor = open(String(folderPath), openForPathsOnly | O_DIRECTORY | O_CLOEXEC)
        }
        guard folder.descriptor >= 0 else { return FileStatus(path: path) }  // gone, or not to be opened: as before
        var info = stat()
        let found = path[utf8.index(after: slash)...].withCString { name in fstatat(folder.descriptor, name, &info, 0) == 0 }
        return found ? FileStatus(info) : nil
    }

    /// Linux's `O_PATH` (the same on every architecture), which Glibc's module does not export: a
    /// descriptor to look names up in, needing no read permission, as `stat` of a whole path needs none.
    private static let openForPathsOnly: Int32 = 0o10000000

    private struct OpenFolder {
        var path: Substring?
        var descriptor: Int32 = -1

        mutating func close() {
            if descriptor >= 0 { _ = Glibc.close(descriptor) }
            descriptor = -1
            path = nil
        }
    }
}
