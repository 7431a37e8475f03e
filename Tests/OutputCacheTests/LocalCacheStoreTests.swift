import Foundation
import Glibc
import Testing
@testable import OutputCache

@Suite struct LocalCacheStoreTests {
    @Test func theSameContentIsStoredOnce() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        try folder.write("same bytes\n", to: "a.txt")
        try folder.write("same bytes\n", to: "b.txt")
        let store = LocalCacheStore(directory: folder.path + "/cache")
        let first = try store.storeBlob(copying: folder.path + "/a.txt")
        let second = try store.storeBlob(copying: folder.path + "/b.txt")
        #expect(first.sha256 == second.sha256)
        #expect(first.size == 11)
        #expect(store.statistics() == CacheStatistics(records: 0, blobs: 1, bytes: 11))
        // Nothing is left behind under tmp/ by a store that found the blob there already.
        #expect(folder.files(below: "cache/tmp").isEmpty)
    }

    @Test func outputsComeBackWithTheirModesLinksAndFolders() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        try folder.write("#!/bin/sh\necho hi\n", to: "work/out/tool", mode: 0o755)
        try folder.write("data\n", to: "work/out/lib/data.txt")
        symlink("tool", folder.path + "/work/out/tool-link")
        let store = LocalCacheStore(directory: folder.path + "/cache")
        let outputs = try OutputPaths.snapshot([folder.path + "/work/out"], in: folder.path + "/work", into: store)
        #expect(outputs.map(\.path) == ["out", "out/lib", "out/lib/data.txt", "out/tool", "out/tool-link"])

        try FileManager.default.removeItem(atPath: folder.path + "/work/out")
        try OutputPaths.restore(outputs, in: folder.path + "/work", from: store)
        #expect(try folder.read("work/out/tool") == "#!/bin/sh\necho hi\n")
        #expect(folder.mode(of: "work/out/tool") == 0o755)
        #expect(folder.mode(of: "work/out/lib/data.txt") == 0o644)
        #expect(folder.linkTarget(of: "work/out/tool-link") == "tool")
        // No staging file is left beside the outputs.
        #expect(folder.files(below: "work/out") == ["lib", "lib/data.txt", "tool", "tool-link"])
    }

    @Test func aCorruptBlobIsNotRestoredAndIsDeleted() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        try folder.write("good\n", to: "work/a.txt")
        try folder.write("also good\n", to: "work/b.txt")
        let store = LocalCacheStore(directory: folder.path + "/cache")
        let outputs = try OutputPaths.snapshot([folder.path + "/work/a.txt", folder.path + "/work/b.txt"], in: folder.path + "/work", into: store)
        let corrupt = try #require(outputs[1].sha256)
        try "tampered\n".write(toFile: store.blobPath(corrupt), atomically: false, encoding: .utf8)
        try folder.write("old a\n", to: "work/a.txt")
        try folder.write("old b\n", to: "work/b.txt")

        #expect(throws: CacheError.self) { try OutputPaths.restore(outputs, in: folder.path + "/work", from: store) }
        // Nothing was put in place, not even the file whose blob was good, and the bad blob is gone.
        #expect(try folder.read("work/a.txt") == "old a\n")
        #expect(try folder.read("work/b.txt") == "old b\n")
        #expect(!FileManager.default.fileExists(atPath: store.blobPath(corrupt)))
        #expect(folder.files(below: "work") == ["a.txt", "b.txt"])
    }

    @Test func recordsRoundTripAndRejectPathsOutsideTheFolder() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = LocalCacheStore(directory: folder.path + "/cache")
        let log = try store.storeBlob(Array("log\n".utf8))
        let record = ActionRecord(format: CacheKeyParts.formatVersion, outputs: [.init(path: "out", kind: .directory, mode: 0o755)],
                                  log: log, logSize: 4, run: 3, host: "h", time: "t", task: "build")
        try store.storeRecord(record, key: String(repeating: "a", count: 64))
        #expect(store.record(String(repeating: "a", count: 64)) == record)
        var hostile = record
        hostile.outputs = [.init(path: "../escape", kind: .directory, mode: 0o755)]
        #expect(ActionRecord.decoded(hostile.encoded()) == nil)
        // A file below a link of the record's own would be written wherever the link points.
        hostile.outputs = [.init(path: "out", kind: .symlink, target: "/etc"), .init(path: "out/passwd", kind: .file, mode: 0o644, sha256: log, size: 4)]
        #expect(ActionRecord.decoded(hostile.encoded()) == nil)
    }

    @Test func garbageCollectionRemovesTheLeastRecentlyUsedFirst() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = LocalCacheStore(directory: folder.path + "/cache")
        let old = try store.storeBlob(Array(repeating: 1, count: 1000))
        let recent = try store.storeBlob(Array(repeating: 2, count: 1000))
        // The older one was last used a day ago; the other is used now.
        var times = [timespec(tv_sec: time(nil) - 86_400, tv_nsec: 0), timespec(tv_sec: time(nil) - 86_400, tv_nsec: 0)]
        utimensat(AT_FDCWD, store.blobPath(old), &times, 0)
        #expect(store.hasBlob(recent))

        let collection = store.collectGarbage(maxBytes: 1500, now: Int64(time(nil)))
        #expect(collection == CacheCollection(removedEntries: 1, removedBytes: 1000, keptBytes: 1000))
        #expect(!store.hasBlob(old))
        #expect(store.hasBlob(recent))
    }
}
