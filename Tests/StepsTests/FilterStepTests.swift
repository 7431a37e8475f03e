import Execution
import Foundation
import ImageCodec
import JobGraphBasics
import JobGraphSystem
import PipelineModel
import Steps
import Testing

/// The `filter` step through `LocalExecutor`, on real image files in a temporary folder.
@Suite struct FilterStepTests {
    let codec = ImageCodec()

    @Test func sepiaFromJPEGToPNG() async throws {
        let folder = try FilterFolder()
        defer { folder.remove() }
        try folder.writeImage(FilterFolder.photo(width: 120, height: 80), to: "in.jpg")

        let run = try await folder.run(.sepia, input: "in.jpg", output: "out.png", intensity: 0.8)

        #expect(run.result == .succeeded)
        let expected = try codec.decode(contentsOf: folder.file("in.jpg")).sepiaToned(intensity: 0.8)
        #expect(try codec.decode(contentsOf: folder.file("out.png")) == expected)
        #expect(run.lines == ["sepia: in.jpg (120×80) -> out.png (120×80, \(try folder.size(of: "out.png")) bytes)"])
        #expect(try folder.log().contains("sepia: in.jpg (120×80) -> out.png"))
        #expect(try folder.names() == ["in.jpg", "logs", "out.png"])
    }

    @Test func resizeFromPNGToJPEGIntoANewFolder() async throws {
        let folder = try FilterFolder()
        defer { folder.remove() }
        try folder.writeImage(FilterFolder.photo(width: 200, height: 100), to: "in.png")

        let run = try await folder.run(.resize, input: "in.png", output: "build/small/out.jpeg", width: 50, quality: 80)

        #expect(run.result == .succeeded)
        let output = try codec.decode(contentsOf: folder.file("build/small/out.jpeg"))
        #expect(output.width == 50 && output.height == 25)
    }

    @Test func aSuccessfulRunReplacesAnEarlierOutputWholly() async throws {
        let folder = try FilterFolder()
        defer { folder.remove() }
        let photo = FilterFolder.photo(width: 40, height: 30)
        try folder.writeImage(photo, to: "in.png")
        try Data(repeating: 7, count: 100_000).write(to: URL(fileURLWithPath: folder.file("out.png")))

        let run = try await folder.run(.invert, input: "in.png", output: "out.png")

        #expect(run.result == .succeeded)
        #expect(try codec.decode(contentsOf: folder.file("out.png")) == photo.inverted())
        #expect(try folder.names() == ["in.png", "logs", "out.png"])
    }

    @Test(arguments: ["png", "jpg"])
    func aTruncatedInputFailsNamingItAndLeavesNothingAtTheOutput(format: String) async throws {
        let folder = try FilterFolder()
        defer { folder.remove() }
        let bytes = try codec.encode(FilterFolder.photo(width: 64, height: 64), for: "x.\(format)")
        try Data(bytes.prefix(bytes.count / 2)).write(to: URL(fileURLWithPath: folder.file("in.\(format)")))
        // An earlier run's output must not survive to pass for this run's.
        try folder.writeImage(FilterFolder.photo(width: 8, height: 8), to: "out.png")

        let run = try await folder.run(.grayscale, input: "in.\(format)", output: "out.png")

        guard case .failed(nil, let reason, _) = run.result else {
            Issue.record("expected a failure, got \(run.result)")
            return
        }
        #expect(reason.hasPrefix("'in.\(format)' is truncated ("))
        #expect(try folder.names() == ["in.\(format)", "logs"])
        #expect(try folder.log().contains(reason))
    }

    @Test func aMissingInputFailsNamingIt() async throws {
        let folder = try FilterFolder()
        defer { folder.remove() }

        let run = try await folder.run(.blur, input: "photos/missing.png", output: "out.png", radius: 2)

        #expect(run.result == .failed(exitCode: nil, reason: "cannot read 'photos/missing.png': No such file or directory"))
        #expect(try folder.names() == ["logs"])
    }

    @Test func aCorruptInputFilteredInPlaceIsKept() async throws {
        let folder = try FilterFolder()
        defer { folder.remove() }
        try Data("not an image".utf8).write(to: URL(fileURLWithPath: folder.file("photo.png")))

        let run = try await folder.run(.invert, input: "photo.png", output: "photo.png")

        #expect(run.result == .failed(exitCode: nil, reason: "'photo.png' is not a PNG or JPEG image"))
        #expect(try String(contentsOfFile: folder.file("photo.png"), encoding: .utf8) == "not an image")
    }

    @Test func terminatingStopsTheWorkAndLeavesNothing() async throws {
        let folder = try FilterFolder()
        defer { folder.remove() }
        try folder.writeImage(FilterFolder.photo(width: 1500, height: 1000), to: "in.png")

        let run = try await folder.run(.blur, input: "in.png", output: "out.png", radius: 20) { execution in
            execution.terminate(grace: 5)
        }

        #expect(run.result == .failed(exitCode: nil, reason: "stopped"))
        #expect(try folder.names() == ["in.png", "logs"])
    }

    @Test func aTimeoutStopsTheWork() async throws {
        let folder = try FilterFolder()
        defer { folder.remove() }
        try folder.writeImage(FilterFolder.photo(width: 1500, height: 1000), to: "in.png")

        let run = try await folder.run(.tiltShift, input: "in.png", output: "out.png", timeout: 0.001)

        #expect(run.result == .failed(exitCode: nil, reason: "timed out after 0.001s"))
        #expect(try folder.names() == ["in.png", "logs"])
    }
}

/// What one filter attempt reported.
struct FilterRun: Sendable {
    var result: TaskResult
    var lines: [String]
}

/// A temporary folder holding a filter task's files, and the means to run one there.
struct FilterFolder {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "jobgraph-filter-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }  // best effort: the OS cleans /tmp too

    func file(_ name: String) -> String { path + "/" + name }

    /// The folder's entries, sorted: shows any leftover temporary file.
    func names() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: path).sorted() }

    func size(of name: String) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: file(name))[.size] as? Int ?? -1
    }

    func log() throws -> String { try String(contentsOfFile: file("logs/filter.log"), encoding: .utf8) }

    func writeImage(_ bitmap: Bitmap, to name: String) throws {
        let bytes = try ImageCodec().encode(bitmap, for: name)
        try Data(bytes).write(to: URL(fileURLWithPath: file(name)))
    }

    /// Colour gradients with a ripple: content like a photo's.
    static func photo(width: Int, height: Int) -> Bitmap {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let offset = (y * width + x) * 4
                pixels[offset] = UInt8(x * 255 / width)
                pixels[offset + 1] = UInt8(y * 255 / height)
                pixels[offset + 2] = UInt8(128 + 100 * sin(Double(x + y) / 9))
            }
        }
        return Bitmap(width: width, height: height, pixels: pixels) ?? Bitmap(width: 1, height: 1, pixels: [0, 0, 0, 255])!
    }

    /// Runs one `filter` attempt through `LocalExecutor` and waits for its end.
    /// - Parameter steer: called with the running attempt right after it starts.
    func run(_ effect: FilterSpec.Effect, input: String, output: String, intensity: Double? = nil, radius: Double? = nil,
             width: Int? = nil, quality: Int? = nil, timeout: Double? = nil,
             steer: @Sendable (any TaskExecution) -> Void = { _ in }) async throws -> FilterRun {
        let location = SourceLocation(file: "pipeline.yaml", line: 1, column: 1)
        let spec = FilterSpec(input: Template(literal: input, location: location), output: Template(literal: output, location: location),
                              effect: effect, intensity: intensity, radius: radius, width: width, quality: quality)
        let work = TaskWork(id: "filter", attempt: 1, work: .filter(FilterWork(input: file(input), output: file(output), spec: spec)),
                            workingDirectory: path, environment: [:], niceness: 0, timeout: timeout, logPath: file("logs/filter.log"))
        let loop = try EventLoop()
        defer { loop.stop() }
        let executor = LocalExecutor(loop: loop, logDirectory: file("logs"))
        let lines = Locked<[String]>([])
        return try await withCheckedThrowingContinuation { continuation in
            let reporter = TaskReporter(output: { line in lines.withLock { $0.append(line) } }, finished: { result in
                continuation.resume(returning: FilterRun(result: result, lines: lines.withLock { $0 }))
            })
            do {
                steer(try executor.start(work, reporter: reporter))
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }
}
