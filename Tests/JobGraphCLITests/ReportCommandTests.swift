import Foundation
import ImageCodec
import JobGraphTestSupport
import Testing

/// `jobgraph report` of the photos example, opened in a real headless Chromium: the screenshot shows a
/// lane per job slot with coloured bars, and the page's script ran without an error.
@Suite(.hangLimit(minutes: 2))
struct ReportCommandTests {
    @Test(.enabled(if: Chromium.path != nil, "chromium is not installed (Debian package 'chromium'; .ci/install-deps --with-test-tools installs it)"))
    func thePhotosReportShowsALanePerSlotAndColouredBarsInChromium() async throws {
        let directory = try EventSchemaTests.photosExample()
        defer { directory.remove() }
        let run = try await JobGraphBinary.run(["run", "photos.yaml", "--jobs", "4", "--events", "events.jsonl"], in: directory)
        #expect(run.status == 0, "\(run.standardError)")
        let report = try await JobGraphBinary.run(["report", "photos.yaml", "-o", "report.html"], in: directory)
        #expect(report.status == 0, "\(report.standardError)")
        #expect(report.standardOutput == "wrote report.html (run 1 of photos.yaml)\n")
        let html = try #require(directory.read("report.html"))
        #expect(!html.contains("src=\"http") && !html.contains("href=\"http"), "the page fetches nothing")
        #expect(!html.contains("<link") && !html.contains("src="), "everything is inline")
        for heading in ["Timeline", "Critical path", "Slowest tasks", "Failures", "Task graph"] {
            #expect(html.contains("<h2>\(heading)</h2>"))
        }
        #expect(html.contains("photo[2]") && html.contains("HTTP 404"), "the failed download is listed with its reason")

        // Lanes: the run's --jobs, or more if more attempts overlapped (a service runs beside the jobs).
        let lanes = max(4, Self.mostExecutingAtOnce(try EventSchemaTests.objects(directory.read("events.jsonl"))))

        let page = "file://" + directory.file("report.html")
        let dom = try await Chromium.run(["--dump-dom", page], in: directory)
        #expect(dom.output.contains("data-script=\"ok\""), "the page's script did not run to its end")
        #expect(!dom.output.contains("data-error"), "the page raised: \(dom.output.prefix(400))")
        #expect(dom.consoleLines.isEmpty, "console: \(dom.consoleLines)")

        let shot = try await Chromium.run(["--screenshot=" + directory.file("shot.png"), "--window-size=1200,900", page], in: directory)
        #expect(shot.consoleLines.isEmpty, "console: \(shot.consoleLines)")
        let bitmap = try ImageCodec().decode(contentsOf: directory.file("shot.png"))

        // The lane markers: one solid square per lane, in a colour nothing else on the page uses.
        let marker = RGBA(0x5b, 0x21, 0xb6, 255)
        let column = try #require((0..<min(60, bitmap.width)).max { Self.count(marker, inColumn: $0, of: bitmap) < Self.count(marker, inColumn: $1, of: bitmap) })
        let markerRuns = Self.runs(of: marker, inColumn: column, of: bitmap)
        #expect(markerRuns.count == lanes, "\(markerRuns.count) lanes drawn for \(lanes) slots")

        // Bars: along each lane's middle, green for successes; the example's misspelled photos fail in red.
        let green = RGBA(0x16, 0xa3, 0x4a, 255)
        let red = RGBA(0xdc, 0x26, 0x26, 255)
        var greenSegments = 0, redPixels = 0, lanesWithBars = 0
        for run in markerRuns {
            let y = (run.lowerBound + run.upperBound) / 2
            let row = (column + 20..<bitmap.width).map { bitmap[$0, y] }
            let segments = Self.segments(of: green, in: row)
            greenSegments += segments
            let reds = row.filter { Self.close($0, red) }.count
            redPixels += reds
            if segments > 0 || reds > 0 { lanesWithBars += 1 }
        }
        #expect(greenSegments >= 5, "\(greenSegments) green bars")
        #expect(redPixels > 0, "no red bar for the failed downloads")
        #expect(lanesWithBars >= 3, "bars in only \(lanesWithBars) lanes")
    }

    /// Resources in the report (docs/cli.md, "report"): each total with where it comes from and the peak
    /// the attempts held at once, each attempt's amounts beside it, seen in Chromium. `hold` runs until the
    /// second attempt of `grow` (twice the memory) has begun, so the two overlap: the peak is known.
    @Test(.enabled(if: Chromium.path != nil, "chromium is not installed (Debian package 'chromium'; .ci/install-deps --with-test-tools installs it)"))
    func theReportShowsResourcesInUseAgainstTheTotalsInChromium() async throws {
        let directory = try ScratchDirectory("jobgraph-report-resources")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            resources: {gpus: 1}
            tasks:
              grow: {run: '[ "$JOBGRAPH_ATTEMPT" = 2 ] && touch grown', retries: 1, retry_delay: 0, retry_scale: {mem: 2},
                     resources: {mem: 1G}}
              hold: {run: 'while [ ! -f grown ]; do sleep 0.05; done', resources: {mem: 1G}}
            """, to: "p.yaml")
        let run = try await JobGraphBinary.run(["run", "p.yaml", "--jobs", "2", "--resources", "mem=3G", "--events", "e.jsonl"], in: directory)
        #expect(run.status == 0, "\(run.standardError)")
        _ = await EventSchemaTests.validate(["e.jsonl"], in: directory)
        let events = try EventSchemaTests.objects(directory.read("e.jsonl"))
        #expect(ResourcesRunTests.mostHeld("mem", in: events) == 3 << 30)
        let report = try await JobGraphBinary.run(["report", "p.yaml", "-o", "report.html"], in: directory)
        #expect(report.status == 0, "\(report.standardError)")

        let dom = try await Chromium.run(["--dump-dom", "file://" + directory.file("report.html")], in: directory)
        #expect(dom.output.contains("data-script=\"ok\""), "the page's script did not run to its end")
        #expect(dom.consoleLines.isEmpty, "console: \(dom.consoleLines)")
        #expect(dom.output.contains("<h2>Resources</h2>"))
        let rows = Self.resourceRows(in: dom.output)
        // `cpus` first, then the file's totals, then what only `--resources` gives.
        #expect(rows == [["cpus", "2", "2", "--jobs"], ["gpus", "0", "1", "the pipeline's resources"], ["mem", "3G", "3G", "--resources"]],
                "\(rows)")
        // Each attempt's amounts: the retry's twice the first's.
        #expect(dom.output.contains("grow · attempt 2 · duration"), "\(dom.output)")
        #expect(dom.output.contains("held cpus 1 · mem 2G\"") && dom.output.contains("held cpus 1 · mem 1G\""), "\(dom.output)")

        // A pipeline that declares no resources gets none of it.
        try directory.write("version: 1\ntasks:\n  a: {run: \"true\"}\n", to: "p.yaml")
        #expect(try await JobGraphBinary.run(["run", "p.yaml"], in: directory).status == 0)
        #expect(try await JobGraphBinary.run(["report", "p.yaml", "-o", "plain.html"], in: directory).status == 0)
        #expect(directory.read("plain.html")?.contains("<h2>Resources</h2>") == false)
    }

    /// The cells of the Resources table's rows, tags and the meter left out: name, peak, total, origin.
    static func resourceRows(in html: String) -> [[String]] {
        html.components(separatedBy: "<tr data-resource=").dropFirst().map { row in
            let body = row.components(separatedBy: "</tr>")[0]
            return body.components(separatedBy: "<td").dropFirst().map { cell in
                let inner = cell.components(separatedBy: "</td>")[0]
                // Text only: drop every tag.
                return inner.replacingOccurrences(of: "^[^>]*>", with: "", options: .regularExpression)
                    .replacingOccurrences(of: "<[^>]*>", with: "", options: .regularExpression)
            }
        }
    }

    @Test func aPipelineWithoutRunsOrWithoutThatRunIsAnErrorNamingHistory() async throws {
        let directory = try ScratchDirectory("jobgraph-report")
        defer { directory.remove() }
        try directory.write("version: 1\ntasks:\n  a: {run: \"true\"}\n", to: "p.yaml")
        let none = try await JobGraphBinary.run(["report", "p.yaml"], in: directory)
        #expect(none.status == 2)
        #expect(none.standardError == "error: no runs of p.yaml yet; see `jobgraph history p.yaml`\n")
        #expect(!directory.exists("report.html"))

        #expect(try await JobGraphBinary.run(["run", "p.yaml"], in: directory).status == 0)
        let missing = try await JobGraphBinary.run(["report", "p.yaml", "--run", "7"], in: directory)
        #expect(missing.status == 2)
        #expect(missing.standardError == "error: no run 7 of p.yaml in the history; see `jobgraph history p.yaml`\n")
        let first = try await JobGraphBinary.run(["report", "p.yaml", "--run", "1", "--output", "first.html"], in: directory)
        #expect(first.status == 0, "\(first.standardError)")
        #expect(directory.read("first.html")?.contains("data-lanes=\"") == true)
    }

    // MARK: - Pixels

    static func close(_ a: RGBA, _ b: RGBA) -> Bool {
        abs(Int(a.red) - Int(b.red)) <= 3 && abs(Int(a.green) - Int(b.green)) <= 3 && abs(Int(a.blue) - Int(b.blue)) <= 3
    }

    static func count(_ color: RGBA, inColumn x: Int, of bitmap: Bitmap) -> Int {
        (0..<bitmap.height).filter { close(bitmap[x, $0], color) }.count
    }

    /// The vertical stretches of `color` in column `x`, top to bottom.
    static func runs(of color: RGBA, inColumn x: Int, of bitmap: Bitmap) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        var start: Int?
        for y in 0...bitmap.height {
            let inside = y < bitmap.height && close(bitmap[x, y], color)
            if inside, start == nil { start = y }
            if !inside, let begun = start { runs.append(begun..<y); start = nil }
        }
        return runs
    }

    static func segments(of color: RGBA, in row: [RGBA]) -> Int {
        var count = 0, inside = false
        for pixel in row {
            let matches = close(pixel, color)
            if matches, !inside { count += 1 }
            inside = matches
        }
        return count
    }

    /// The most tasks executing at once in an event stream, leaving out dynamic fan-outs, which execute
    /// nothing themselves (their items do).
    static func mostExecutingAtOnce(_ events: [[String: Any]]) -> Int {
        let transitions = events.filter { $0["event"] as? String == "transition" }
        let tasks = Set(transitions.compactMap { $0["task"] as? String })
        let fanOuts = Set(tasks.filter { task in tasks.contains { $0.hasPrefix(task + "[") } })
        var executing = 0, most = 0
        for event in transitions {
            guard let task = event["task"] as? String, !fanOuts.contains(task) else { continue }
            if event["from"] as? String == "executing" { executing -= 1 }
            if event["to"] as? String == "executing" { executing += 1 }
            most = max(most, executing)
        }
        return most
    }
}

/// Debian's `chromium`, run headless with a profile of its own in the test's folder.
enum Chromium {
    static let path: String? = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }

    struct Result {
        var output: String
        /// What the page wrote to its console, errors included, as Chromium logs them.
        var consoleLines: [String]
    }

    static func run(_ arguments: [String], in directory: ScratchDirectory) async throws -> Result {
        let run = await ExternalProgram.run(
            try #require(path),
            ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1",
             "--user-data-dir=" + directory.file("chromium-profile"), "--enable-logging=stderr", "--v=0"] + arguments,
            environment: ["PATH": "/usr/bin:/bin", "HOME": directory.path], within: .seconds(90))
        #expect(run.status == 0, "chromium exited with \(run.status): \(run.errorOutput.suffix(2000))")
        return Result(output: run.output,
                      consoleLines: run.errorOutput.split(separator: "\n").map(String.init).filter { $0.contains(":CONSOLE") })
    }
}
