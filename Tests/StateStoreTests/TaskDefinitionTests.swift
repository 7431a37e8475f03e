import Execution
import Foundation
import JobGraphBasics
import PipelineModel
import Testing
@testable import StateStore

@Suite struct TaskDefinitionTests {
    static let base = TaskDefinition(action: "run", parameters: ["swift build"], environment: ["A": "1", "B": "2"],
                              inputs: ["Sources/**"], outputs: [".build/app"])

    @Test func equalDefinitionsHaveEqualFingerprints() {
        var reordered = TaskDefinition(action: "run", parameters: ["swift build"], environment: [:], inputs: ["Sources/**"], outputs: [".build/app"])
        reordered.environment["B"] = "2"
        reordered.environment["A"] = "1"
        #expect(reordered.fingerprint == Self.base.fingerprint)
        #expect(Self.base.fingerprint.count == 64)
    }

    /// Fingerprints are stored between runs: an encoding that changed would make every task of every
    /// pipeline run again after an upgrade. The digests were computed apart, by Python's hashlib over the
    /// documented encoding.
    @Test func fingerprintsStayThoseOfTheDocumentedEncoding() {
        #expect(Self.base.fingerprint == "2ec839e2e67c28da8a22ca1bc34e7cc1e8c83b4ee2aa64c7c05351044d8928d3")
        let unicode = TaskDefinition(action: "run", parameters: ["echo é ünïcode"], environment: ["Z": "x y", "Ä": "2"],
                                     workingDirectory: "sub dir", inputs: ["a b/*.c"], outputs: [])
        #expect(unicode.fingerprint == "8ccc1413a361b65f8762cd3114724d3437eeea5b35ff73685c7cc0e147e9a0aa")
    }

    /// One changed field each, every one of which must change the fingerprint.
    static let variants: [TaskDefinition] = {
        let base = TaskDefinitionTests.base
        var variants = Array(repeating: base, count: 8)
        variants[0].parameters = ["swift build -c release"]
        variants[1].environment["A"] = "3"
        variants[2].environment["C"] = ""
        variants[3].action = "parallel"
        variants[4].workingDirectory = "sub"
        variants[5].inputs.append("Package.swift")
        variants[6].outputs = []
        variants[7].parameters = ["swift", " build"]  // concatenation must not collide with ["swift build"]
        return variants
    }()

    @Test(arguments: variants)
    func anyChangeChangesTheFingerprint(changed: TaskDefinition) {
        #expect(changed.fingerprint != Self.base.fingerprint)
    }

    /// The stored text gives back the definition, whatever its values hold, so a rerun can name what changed.
    @Test(arguments: variants + [TaskDefinition(action: "run", parameters: ["printf 'a\nb:c' > 7:x", ""],
                                                 environment: ["É": "\n", "K": "3:4\n"], workingDirectory: "dé/j",
                                                 inputs: [], outputs: ["o\n"])])
    func theCanonicalEncodingReadsBack(definition: TaskDefinition) {
        #expect(TaskDefinition(canonicalEncoding: definition.canonicalEncoding) == definition)
    }

    @Test func aTextThatIsNoEncodingReadsAsNothing() {
        let text = Self.base.canonicalEncoding
        #expect(TaskDefinition(canonicalEncoding: "") == nil)
        #expect(TaskDefinition(canonicalEncoding: String(text.dropLast(3))) == nil)
        #expect(TaskDefinition(canonicalEncoding: text + "extra\n") == nil)
        #expect(TaskDefinition(canonicalEncoding: text.replacingOccurrences(of: "action 1", with: "action 9")) == nil)
    }

    @Test(arguments: zip(variants, [RunReason.commandChanged, .environmentChanged("A"), .environmentChanged("C"), .actionChanged,
                                    .workingDirectoryChanged, .inputPatternsChanged, .outputPatternsChanged, .commandChanged]))
    func everyChangeIsNamed(changed: TaskDefinition, reason: RunReason) {
        #expect(changed.change(from: Self.base) == reason)
        #expect(Self.base.change(from: Self.base) == nil)
    }

    @Test func builtFromWorkItKeepsDeclaredEnvironmentAndRelativePaths() {
        let work = TaskWork(
            id: "fetch", attempt: 2,
            work: .download(url: "http://127.0.0.1/x.json", destination: "/project/build/x.json", sha256: nil, maxBytes: 100),
            workingDirectory: "/project", environment: ["HOME": "/root", "SERVER": "http://127.0.0.1", "PATH": "/bin"],
            niceness: 0, timeout: nil, logPath: "/project/.jobgraph/logs/fetch.log")
        let definition = TaskDefinition(work: work, environmentNames: ["SERVER"], inputs: [], outputs: ["build/x.json"],
                                        pipelineDirectory: "/project")
        #expect(definition == TaskDefinition(action: "download", parameters: ["url=http://127.0.0.1/x.json", "to=build/x.json", "max_bytes=100"],
                                             environment: ["SERVER": "http://127.0.0.1"], workingDirectory: ".", outputs: ["build/x.json"]))

        // The caller's own environment and the attempt number do not count; the project's place does not either.
        var other = work
        other.attempt = 1
        other.environment["HOME"] = "/home/someone"
        other.work = .download(url: "http://127.0.0.1/x.json", destination: "/moved/build/x.json", sha256: nil, maxBytes: 100)
        other.workingDirectory = "/moved"
        let moved = TaskDefinition(work: other, environmentNames: ["SERVER"], inputs: [], outputs: ["build/x.json"], pipelineDirectory: "/moved")
        #expect(moved.fingerprint == definition.fingerprint)
    }

    @Test func shellAndFilterWork() {
        let shell = TaskWork(id: "t", attempt: 1, work: .shell(commands: ["make", "make install"], concurrently: true),
                             workingDirectory: "/p/sub", environment: [:], niceness: 0, timeout: nil, logPath: "")
        let definition = TaskDefinition(work: shell, environmentNames: [], inputs: [], outputs: [], pipelineDirectory: "/p")
        #expect(definition.action == "parallel")
        #expect(definition.parameters == ["make", "make install"])
        #expect(definition.workingDirectory == "sub")

        let here = SourceLocation(file: "p.yaml", line: 1, column: 1)
        let spec = FilterSpec(input: Template(literal: "in.jpg", location: here), output: Template(literal: "out.png", location: here),
                              effect: .sepia, intensity: 0.8)
        let filter = TaskWork(id: "f", attempt: 1, work: .filter(FilterWork(input: "/p/in.jpg", output: "/p/out.png", spec: spec)),
                              workingDirectory: "/p", environment: [:], niceness: 0, timeout: nil, logPath: "")
        #expect(TaskDefinition(work: filter, environmentNames: [], inputs: [], outputs: [], pipelineDirectory: "/p").parameters
            == ["input=in.jpg", "output=out.png", "effect=sepia", "intensity=0.8"])
    }
}
