import Foundation
import JobGraphBasics
import JobGraphSystem
import JobGraphTestSupport
import Testing

/// The inotify wrapper against a real folder: what it reports and that `stop()` ends it.
@Suite(.hangLimit(minutes: 1))
struct FileWatcherTests {
    /// Collects batches as the watcher's thread delivers them.
    private final class Batches: Sendable {
        private let value = Locked<[[FileWatcher.Change]]>([])
        func append(_ batch: [FileWatcher.Change]) { value.withLock { $0.append(batch) } }
        var all: [[FileWatcher.Change]] { value.withLock { $0 } }
        var paths: Set<String> { Set(all.joined().map(\.path)) }

        /// Waits (bounded) until some batch names `path`.
        func waitFor(_ path: String) async -> Bool {
            for _ in 0..<2000 {
                if paths.contains(path) { return true }
                try? await Task.sleep(for: .milliseconds(10))
            }
            return false
        }
    }

    @Test func writesCreationsRemovalsAndRenamesAreReportedInTheWatchedFolderOnly() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path + "/sub", withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: directory.path + "/elsewhere", withIntermediateDirectories: false)
        try directory.write("1", to: "a.txt")
        let batches = Batches()
        let watcher = try FileWatcher(quietPeriod: .milliseconds(50)) { batches.append($0) }
        defer { watcher.stop() }
        try watcher.watch(folder: directory.path)
        try watcher.watch(folder: directory.path + "/sub")
        try watcher.watch(folder: directory.path)  // twice is harmless
        #expect(watcher.watchedFolders == [directory.path, directory.path + "/sub"])

        try directory.write("x", to: "elsewhere/ignored.txt")
        try directory.write("2", to: "a.txt")
        #expect(await batches.waitFor(directory.path + "/a.txt"))
        try directory.write("n", to: "sub/new.txt")
        #expect(await batches.waitFor(directory.path + "/sub/new.txt"))
        #expect(batches.all.joined().contains { $0.path == directory.path + "/sub/new.txt" && $0.isCreation && !$0.isDirectory })
        try FileManager.default.moveItem(atPath: directory.path + "/a.txt", toPath: directory.path + "/sub/moved.txt")
        #expect(await batches.waitFor(directory.path + "/sub/moved.txt"))
        try FileManager.default.createDirectory(atPath: directory.path + "/made", withIntermediateDirectories: false)
        #expect(await batches.waitFor(directory.path + "/made"))
        #expect(batches.all.joined().contains { $0.path == directory.path + "/made" && $0.isDirectory && $0.isCreation })
        #expect(!batches.paths.contains { $0.contains("elsewhere") })
    }

    @Test func aBurstOfWritesIsOneBatch() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let batches = Batches()
        // A quiet period far longer than the burst takes, so the burst cannot be split by a slow machine.
        let watcher = try FileWatcher(quietPeriod: .seconds(2), longestBatch: .seconds(30)) { batches.append($0) }
        defer { watcher.stop() }
        try watcher.watch(folder: directory.path)
        for index in 0..<20 { try directory.write("\(index)", to: "f\(index).txt") }
        try directory.write("end", to: "last.txt")
        #expect(await batches.waitFor(directory.path + "/last.txt"))
        #expect(batches.all.count == 1)
        #expect(batches.paths.count == 21)
    }

    @Test func stopEndsTheThreadAndNoBatchFollows() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let batches = Batches()
        let watcher = try FileWatcher(quietPeriod: .milliseconds(20)) { batches.append($0) }
        try watcher.watch(folder: directory.path)
        watcher.stop()
        // `stop()` has joined the watcher's thread, the only one that delivers batches: none can follow.
        try directory.write("late", to: "late.txt")
        #expect(batches.all.isEmpty)
    }
}
