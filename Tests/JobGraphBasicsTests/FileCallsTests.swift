import Foundation
import JobGraphBasics
import Testing

/// The write loop and `mkdir -p` every file writer shares: what a user would see go wrong is a log cut
/// short, a folder not made, or a message naming the wrong folder.
struct FileCallsTests {
    private func scratchFolder() throws -> String {
        let folder = NSTemporaryDirectory() + "jobgraph-filecalls-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func writesEveryByteEvenWhenThePipeTakesThemInPieces() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        // More than a pipe holds at once (64 KiB), read by another thread: the writer loops over partial writes.
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        nonisolated(unsafe) var received: [UInt8] = []
        let done = DispatchSemaphore(value: 0)
        Thread { [readEnd = ends[0]] in
            var buffer = [UInt8](repeating: 0, count: 8192)
            while true {
                let count = read(readEnd, &buffer, buffer.count)
                if count <= 0 { break }
                received += buffer[0..<count]
            }
            done.signal()
        }.start()
        let failure = bytes.withUnsafeBytes { FileCalls.writeAll($0, to: ends[1]) }
        close(ends[1])
        done.wait()
        #expect(failure == nil)
        #expect(received == bytes)
    }

    @Test func aFailedWriteGivesItsErrorNumber() {
        let bytes: [UInt8] = [1, 2, 3]
        #expect(bytes.withUnsafeBytes { FileCalls.writeAll($0, to: -1) } == EBADF)
        #expect([UInt8]().withUnsafeBytes { FileCalls.writeAll($0, to: -1) } == nil)  // nothing to write, nothing fails
    }

    @Test func createsEveryMissingFolderAndAcceptsOnesThatExist() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(FileCalls.createFolders(folder + "/a/b/c") == nil)
        #expect(FileCalls.createFolders(folder + "/a/b/c") == nil)
        var isFolder: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: folder + "/a/b/c", isDirectory: &isFolder) && isFolder.boolValue)
    }

    @Test func namesTheFolderThatCouldNotBeMade() throws {
        let folder = try scratchFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A file where a folder should be: `mkdir` of the next one down fails with ENOTDIR.
        #expect(FileManager.default.createFile(atPath: folder + "/a", contents: Data()))
        let failure = try #require(FileCalls.createFolders(folder + "/a/b/c"))
        #expect(failure.folder == folder + "/a/b")
        #expect(failure.code == ENOTDIR)
        #expect(String(cString: strerror(failure.code)) == "Not a directory")
    }
}
