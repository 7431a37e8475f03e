import Foundation
import Glibc
import JobGraphBasics
import Testing
@testable import StateStore

/// The last check of a replay: every examined path, stat'ed in its folder, in parts on the cores, must be
/// as the recorded run saw it, missing ones included.
@Suite struct ExaminedPathCheckTests {
    /// Files in two folders (more than one part's worth), a missing file, a file in a missing folder, a
    /// folder, a name in the working folder and a path ending in `/`, each with its status now.
    private func examinedPaths(in directory: TemporaryDirectory) throws -> [NoOpReplayRecord.ExaminedPath] {
        var paths: [String] = []
        for folder in ["a", "b"] {
            try FileManager.default.createDirectory(atPath: directory.path + "/" + folder, withIntermediateDirectories: true)
            for index in 0..<ExaminedPathCheck.pathsPerPart {
                let path = directory.path + "/\(folder)/f\(index)"
                try "\(index)".write(toFile: path, atomically: false, encoding: .utf8)
                paths.append(path)
            }
        }
        paths += [directory.path + "/a/missing", directory.path + "/gone/f1", directory.path + "/b", directory.path + "/b/",
                  "relative-name-that-is-not-there"]
        return paths.sorted().map { NoOpReplayRecord.ExaminedPath(path: $0, status: FileStatus(path: $0)) }
    }

    @Test func pathsAsTheyWereAreUnchanged() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let paths = try examinedPaths(in: directory)
        #expect(paths.filter { $0.status == nil }.count == 3)
        #expect(ExaminedPathCheck.allUnchanged(paths))
        #expect(ExaminedPathCheck.allUnchanged(Array(paths.prefix(10))), "one part on the calling thread")
    }

    /// A caller that no longer wants the answer (the replay's pipeline says something else) stops the check.
    @Test func aStoppedCheckAnswersNo() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let paths = try examinedPaths(in: directory)
        #expect(!ExaminedPathCheck.allUnchanged(paths, unlessStopped: Locked(true)))
        #expect(!ExaminedPathCheck.allUnchanged(Array(paths.prefix(10)), unlessStopped: Locked(true)))
    }

    @Test(arguments: ["an edit in the last part", "a missing file that appears", "a file that goes", "a folder that goes"])
    func anyChangeIsFound(change: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let paths = try examinedPaths(in: directory)
        switch change {
        case "an edit in the last part":
            try "edited, and longer".write(toFile: directory.path + "/b/f2000", atomically: false, encoding: .utf8)
        case "a missing file that appears":
            try "".write(toFile: directory.path + "/a/missing", atomically: false, encoding: .utf8)
        case "a file that goes":
            unlink(directory.path + "/a/f7")
        default:
            try FileManager.default.removeItem(atPath: directory.path + "/a")
        }
        #expect(!ExaminedPathCheck.allUnchanged(paths))
    }

    /// A record writes each folder's files together, however the checks met them, and leaves none out.
    @Test func aRecordGroupsEachFoldersFilesAndKeepsThemAll() {
        var paths: [NoOpReplayRecord.ExaminedPath] = []
        var generator = SystemRandomNumberGenerator()
        for index in 0..<3_000 {
            let folder = ["/p/out", "/p/src", "/p", "/q/out", ""][Int.random(in: 0..<5, using: &generator)]
            paths.append(NoOpReplayRecord.ExaminedPath(path: folder.isEmpty ? "name\(index)" : "\(folder)/f\(index)", status: nil))
        }
        let order = NoOpReplayRecord.pathsByFolder(paths).flatMap(\.positions)
        #expect(order.sorted() == Array(paths.indices))
        let folders = order.map { index in
            let path = paths[index].path
            return path.lastIndex(of: "/").map { String(path[..<$0]) } ?? ""
        }
        var finished: Set<String> = []
        for (position, folder) in folders.enumerated() where position == 0 || folders[position - 1] != folder {
            #expect(!finished.contains(folder), "the files of \(folder) come in two runs")
            finished.insert(folder)
        }
        #expect(finished.count == 5)
    }
}
