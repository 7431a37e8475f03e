import JobGraphBasics
import PipelineModel
import Testing

@Suite struct ActionDecodingTests {
    @Test func runTakesOneCommandOrAList() throws {
        let single = try #require(loadTask("run: make all").task("job"))
        guard case .run(let one) = single.action else { Issue.record("expected run"); return }
        #expect(one.map(\.description) == ["make all"])

        let list = try #require(loadTask("run:\n  - make\n  - make install").task("job"))
        guard case .run(let two) = list.action else { Issue.record("expected run"); return }
        #expect(two.map(\.description) == ["make", "make install"])
        #expect(two.map(\.location.line) == [5, 6])
    }

    @Test func parallelTakesAList() throws {
        let task = try #require(loadTask("parallel: [make a, make b, make c]").task("job"))
        guard case .parallel(let commands) = task.action else { Issue.record("expected parallel"); return }
        #expect(commands.map(\.description) == ["make a", "make b", "make c"])
    }

    @Test(arguments: [
        ("run: ~", "expected a shell command or a list of commands for 'run', found null"),
        ("run:", "expected a shell command or a list of commands for 'run', found nothing"),
        ("run: [make, '']", "empty entry in 'run'; expected a shell command or a list of commands"),
        ("run: {make: all}", "expected a shell command or a list of commands for 'run', found a mapping"),
        ("parallel: []", "'parallel' is empty; expected a list of shell commands"),
    ])
    func badCommandsAreReported(line: String, message: String) {
        #expect(loadTask(line).messages == [message])
    }

    @Test func downloadIsDecoded() throws {
        let loaded = loadTask("""
            download:
              url: "{{ host }}/a.jpg"
              to: build/a.jpg
              sha256: 9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08
              max_bytes: 1048576
            """, vars: "host: https://example.com")
        #expect(loaded.lines == [])
        let task = try #require(loaded.task("job"))
        guard case .download(let download) = task.action else { Issue.record("expected download"); return }
        #expect(download.url.placeholders == ["host@7:13"])
        #expect(download.destination.description == "build/a.jpg")
        #expect(download.sha256 == "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
        #expect(download.maxBytes == 1_048_576)
    }

    @Test func downloadNeedsURLAndDestination() {
        let loaded = loadTask("download: {sha256: ~}")
        #expect(loaded.lines == [
            "pipeline.yaml:4:15: error: missing 'url' in 'download' of task 'job'",
            "pipeline.yaml:4:15: error: missing 'to' in 'download' of task 'job'; give the path to save the download at",
        ])
    }

    @Test(arguments: [
        "http://h/a", "HTTPS://h/a", "{{ host }}/a", "{{ scheme }}://h/a",
    ])
    func acceptedURLs(url: String) {
        let loaded = loadTask("download: {url: '\(url)', to: a}", vars: "host: http://h\nscheme: https")
        #expect(loaded.lines == [])
    }

    @Test(arguments: ["ftp://h/a", "example.com/a", "file:///etc/passwd"])
    func refusedURLs(url: String) {
        let loaded = loadTask("download: {url: '\(url)', to: a}")
        #expect(loaded.messages == ["unsupported URL '\(url)' for 'url'; expected an 'http://' or 'https://' URL"])
    }

    @Test func filterIsDecoded() throws {
        let loaded = loadTask("""
            filter:
              input: build/a.jpg
              output: build/b.jpg
              effect: resize
              width: 320
              height: 200
              quality: 85
            """)
        #expect(loaded.lines == [])
        guard case .filter(let filter)? = loaded.task("job")?.action else { Issue.record("expected filter"); return }
        #expect(filter.input.description == "build/a.jpg")
        #expect(filter.output.description == "build/b.jpg")
        #expect(filter.effect == .resize)
        #expect(filter.width == 320)
        #expect(filter.height == 200)
        #expect(filter.quality == 85)
        #expect(filter.intensity == nil)
        #expect(filter.radius == nil)
    }

    @Test(arguments: [
        ("sepia", "intensity: 0.5"), ("sepia", "intensity: 1"), ("grayscale", ""), ("invert", ""),
        ("blur", "radius: 2.5"), ("tilt-shift", "radius: 8"), ("resize", "height: 10"), ("resize", "width: 1"),
    ])
    func effectTakesItsParameters(effect: String, parameter: String) {
        let extra = parameter.isEmpty ? "" : ", \(parameter)"
        let loaded = loadTask("filter: {input: a.png, output: b.jpeg, effect: \(effect)\(extra), quality: 50}")
        #expect(loaded.lines == [])
    }

    @Test(arguments: [
        ("invert", "intensity: 0.5", "'intensity' does not apply to effect 'invert', which takes no parameters"),
        ("grayscale", "radius: 1", "'radius' does not apply to effect 'grayscale', which takes no parameters"),
        ("blur", "width: 10", "'width' does not apply to effect 'blur', which takes 'radius'"),
        ("resize", "width: 10, radius: 2", "'radius' does not apply to effect 'resize', which takes 'width' or 'height'"),
        ("tilt-shift", "intensity: 1", "'intensity' does not apply to effect 'tilt-shift', which takes 'radius'"),
    ])
    func parameterThatDoesNotApplyIsAnError(effect: String, parameter: String, message: String) {
        let loaded = loadTask("filter: {input: a.png, output: b.png, effect: \(effect), \(parameter)}")
        #expect(loaded.messages == [message])
    }

    @Test(arguments: [
        ("intensity: -0.1", "'intensity' must be from 0 to 1, found -0.1"),
        ("intensity: high", "expected a number for 'intensity', found 'high'"),
        ("intensity: .nan", "expected a number for 'intensity', found a number '.nan'"),
        ("radius: -3", "'radius' must be more than 0, found -3"),
        ("quality: 0", "'quality' must be from 1 to 100, found 0"),
        ("height: -1", "'height' must be from 1 to 65535, found -1"),
    ])
    func outOfRangeParametersAreErrors(parameter: String, message: String) {
        let effect = parameter.hasPrefix("intensity") ? "sepia" : parameter.hasPrefix("radius") ? "blur" : "resize, width: 5"
        let loaded = loadTask("filter: {input: a.png, output: b.jpg, effect: \(effect), \(parameter)}")
        #expect(loaded.messages == [message])
    }

    @Test func templatedOutputIsCheckedByItsLiteralEnding() {
        #expect(loadTask("foreach: [a]\nfilter: {input: a.png, output: 'out/{{ item }}.PNG', effect: invert}").lines == [])
        #expect(loadTask("foreach: [a]\nfilter: {input: a.png, output: 'out/{{ item }}', effect: invert}").lines == [])
        #expect(loadTask("foreach: [a]\nfilter: {input: a.png, output: 'out/{{ item }}.webp', effect: invert}").messages == [
            "unsupported output format 'out/{{ item }}.webp'; 'filter' writes PNG or JPEG, so end the path in '.png', '.jpg' or '.jpeg'",
        ])
    }
}
