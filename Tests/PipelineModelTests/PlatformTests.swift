import PipelineModel
import Testing

/// `platforms:` names (docs/pipeline.md, "Platforms").
@Suite struct PlatformTests {
    @Test func anEntryIncludesThePlatformsItNames() {
        #expect(Platform.includes("linux", system: "linux", architecture: "arm64"))
        #expect(Platform.includes("arm64", system: "darwin", architecture: "arm64"))
        #expect(Platform.includes("linux/amd64", system: "linux", architecture: "amd64"))
        #expect(!Platform.includes("linux/amd64", system: "linux", architecture: "arm64"))
        #expect(!Platform.includes("darwin", system: "linux", architecture: "amd64"))
        #expect(!Platform.includes("amd64", system: "linux", architecture: "arm64"))
    }

    @Test func thisMachineIsOneOfTheNamedPlatforms() {
        #expect(Platform.names.contains(Platform.current), "\(Platform.current)")
        #expect(Platform.includes(Platform.currentSystem))
        #expect(Platform.includes(Platform.current))
    }
}
