import PipelineModel
import Testing

/// Which file `jobgraph run` reads when the user names none, and when a first argument is a file.
@Suite struct PipelineDiscoveryTests {
    @Test func theNearestFolderWinsAndThePathIsRelative() {
        let files: Set = ["/home/me/project/jobgraph.yaml", "/home/me/jobgraph.yaml"]
        #expect(PipelineDiscovery.nearestFile(from: "/home/me/project", isFile: files.contains) == "jobgraph.yaml")
        #expect(PipelineDiscovery.nearestFile(from: "/home/me/project/src/lib", isFile: files.contains) == "../../jobgraph.yaml")
        #expect(PipelineDiscovery.nearestFile(from: "/home/me/other/", isFile: files.contains) == "../jobgraph.yaml")
    }

    @Test func yamlIsPreferredToYmlInOneFolderButANearerYmlWins() {
        let files: Set = ["/a/jobgraph.yml", "/a/jobgraph.yaml", "/a/b/jobgraph.yml"]
        #expect(PipelineDiscovery.nearestFile(from: "/a", isFile: files.contains) == "jobgraph.yaml")
        #expect(PipelineDiscovery.nearestFile(from: "/a/b/c", isFile: files.contains) == "../jobgraph.yml")
    }

    @Test func theRootIsSearchedLastAndNothingFoundIsNil() {
        #expect(PipelineDiscovery.nearestFile(from: "/x/y", isFile: { $0 == "/jobgraph.yaml" }) == "../../jobgraph.yaml")
        #expect(PipelineDiscovery.nearestFile(from: "/", isFile: { $0 == "/jobgraph.yaml" }) == "jobgraph.yaml")
        #expect(PipelineDiscovery.nearestFile(from: "/x/y", isFile: { _ in false }) == nil)
    }

    @Test(arguments: [("p.yaml", true), ("ci.yml", true), ("dir/pipeline", true), ("build", false), ("test[a]", false),
                      ("v1.2", false)])
    func aFirstArgumentNamesAFileByItsSuffixOrASlash(argument: String, isFile: Bool) {
        #expect(PipelineDiscovery.namesFile(argument) == isFile)
    }
}
