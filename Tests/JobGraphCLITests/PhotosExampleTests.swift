import Foundation
import JobGraphTestSupport
import Testing

/// `examples/photos.yaml` end to end through the binary: a local server, a downloaded list, a dynamic
/// fan-out of downloads (two names misspelled on purpose, their failures allowed), sepia filters on the
/// photos that arrived (conditions skip the others) and the contact sheet. The example runs on a copy,
/// its fixed port replaced by a free one so that concurrent runs cannot collide.
@Suite(.hangLimit(minutes: 3))
struct PhotosExampleTests {
    @Test func thePhotosExampleDownloadsFiltersAndWritesTheContactSheet() async throws {
        let examples = Fixtures.repositoryRoot.appendingPathComponent("examples")
        let port = try LoopbackSocket.freePort()
        let yaml = try String(contentsOf: examples.appendingPathComponent("photos.yaml"), encoding: .utf8)
        #expect(yaml.contains("8765"))
        let folder = try PipelineFolder(yaml.replacingOccurrences(of: "8765", with: "\(port)"), prefix: "jobgraph-photos")
        defer { folder.remove() }
        try FileManager.default.copyItem(atPath: examples.appendingPathComponent("photos").path,
                                         toPath: folder.directory.file("photos"))

        let run = try await folder.run()
        #expect(run.status == 0, "\(run.outcome.standardOutput)")
        let states = run.finalStates
        #expect(states.values.filter { $0 == "succeeded" }.count == 18, "\(states)")
        #expect(states.filter { $0.value == "failed" }.keys.sorted() == ["photo[2]", "photo[6]"])
        #expect(states.filter { $0.value == "skipped" }.keys.sorted() == ["sepia[2]", "sepia[6]"])
        #expect(run.outcome.outputLines.contains { $0.hasPrefix("18 succeeded, 2 failed, 2 skipped in ") })

        // Real PNGs came through the server and the filter.
        for name in ["desert", "forest", "glacier", "harbour", "lake", "meadow"] {
            for file in ["\(name).png", "\(name)-sepia.png"] {
                let data = try #require(FileManager.default.contents(atPath: folder.directory.file("build/photos/\(file)")))
                #expect(data.starts(with: [0x89, 0x50, 0x4E, 0x47]), "\(file) is not a PNG")
            }
        }
        let sheet = try #require(folder.directory.read("build/photos/index.html"))
        #expect(sheet.contains("6 of 8"))
        // The server was stopped when the last download ended; nothing outlives jobgraph.
        #expect(ProcessTable.living(withArgument: "\(port)").isEmpty)
        #expect(!run.outcome.standardOutput.contains("left behind"))
    }
}
