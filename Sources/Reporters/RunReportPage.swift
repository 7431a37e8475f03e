import Foundation
import Execution
import PipelineModel
import TaskGraph

/// `jobgraph report`: one self-contained HTML page for one run (inline CSS, SVG and a few lines of
/// script, nothing fetched): a timeline with a lane per job slot and a bar per attempt coloured by its
/// outcome, the critical path outlined, the slowest attempts, the failures with the end of their logs, and
/// the task graph.
///
/// The SVG is drawn here, not by the script, so the page shows the same whatever the browser; the script
/// only shows a bar's details on hover.
public struct RunReportPage {
    public let report: RunReport
    public let graph: TaskGraph

    /// Graphs with more nodes are listed, not drawn: a drawing that size shows nothing.
    public static let largestDrawnGraph = 400
    /// Width of the timeline's plotting area, in CSS pixels.
    static let plotWidth = 960.0
    static let gutter = 96.0
    static let laneHeight = 28.0
    static let axisHeight = 24.0

    /// The fill of each outcome; also the legend.
    static let colors: [(state: TaskState, color: String)] = [
        (.succeeded, "#16a34a"), (.failed, "#dc2626"), (.cancelled, "#6b7280"), (.executing, "#f59e0b"),
        (.upToDate, "#60a5fa"), (.restored, "#22d3ee"), (.skipped, "#d4d4d8"),
    ]
    /// The small square at the start of each lane; one colour nothing else uses, so a test can count lanes.
    public static let laneMarkerColor = "#5b21b6"
    static let laneFills = ["#f8fafc", "#eef2f7"]

    public init(report: RunReport, graph: TaskGraph) {
        self.report = report
        self.graph = graph
    }

    /// The fill for an attempt or task that ended in `state`.
    public static func color(of state: TaskState) -> String {
        colors.first { $0.state == state }?.color ?? "#a1a1aa"
    }

    /// The whole page.
    public func html() -> String {
        var page = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(Self.escape("\(report.pipeline) run \(report.run)")) · jobgraph report</title>
            <style>\(Self.style)</style>
            </head>
            <body>

            """
        page += header()
        page += section("Timeline", id: "timeline", timeline())
        if let totals = report.resources { page += section("Resources", id: "resources", resources(totals)) }
        page += section("Critical path", id: "critical-path", criticalPath())
        page += section("Slowest tasks", id: "slowest", slowest())
        page += section("Failures", id: "failures", failures())
        page += section("Task graph", id: "graph", taskGraph())
        page += """
            <div id="tip" hidden></div>
            <script>\(Self.script)</script>
            </body>
            </html>

            """
        return page
    }

    // MARK: - Sections

    private func header() -> String {
        let wall = report.wallTime.map(Self.seconds) ?? "unfinished"
        let started = report.startedAt.formatted(Date.ISO8601FormatStyle())
        let counts = report.counts.filter { $0.count > 0 }.map { "\($0.count) \(Self.escape($0.state))" }.joined(separator: ", ")
        return """
            <header>
            <h1>\(Self.escape(report.pipeline)) <span class="muted">run \(Self.escape(report.run))</span></h1>
            <p class="outcome outcome-\(Self.escape(report.outcome))">\(Self.escape(report.outcome))</p>
            <p>started \(Self.escape(started)) · wall time \(wall)\(report.jobs.map { " · --jobs \($0)" } ?? "") · \(counts.isEmpty ? "no tasks" : counts)</p>
            </header>

            """
    }

    private func section(_ title: String, id: String, _ body: String) -> String {
        "<section id=\"\(id)\">\n<h2>\(Self.escape(title))</h2>\n\(body)</section>\n"
    }

    private func timeline() -> String {
        guard report.jobs != nil else {
            return "<p class=\"muted\">This run's attempts were not recorded: it was killed before it could write them, "
                + "or an older jobgraph ran it.</p>\n"
        }
        guard !report.attempts.isEmpty else {
            return "<p class=\"muted\">No task executed in this run (every task was up to date, skipped or never started).</p>\n"
        }
        let lanes = report.laneCount
        let span = max(report.wallTime ?? 0, report.attempts.map { $0.end ?? $0.start }.max() ?? 0, 0.001)
        let width = Self.gutter + Self.plotWidth + 16
        let height = Self.axisHeight + Double(lanes) * Self.laneHeight + 8
        let critical = criticalAttempts()
        var svg = "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" "
            + "viewBox=\"0 0 \(Int(width)) \(Int(height))\" data-lanes=\"\(lanes)\">\n"
        // Time axis: about eight ticks at round values.
        let step = Self.tickStep(span)
        var tick = 0.0
        while tick <= span + step / 1000 {
            let x = Self.gutter + tick / span * Self.plotWidth
            svg += "<line x1=\"\(Self.number(x))\" y1=\"\(Int(Self.axisHeight - 4))\" x2=\"\(Self.number(x))\" y2=\"\(Int(height - 8))\" class=\"grid\"/>"
            svg += "<text x=\"\(Self.number(x))\" y=\"14\" class=\"axis\">\(Self.seconds(tick))</text>\n"
            tick += step
        }
        for lane in 0..<lanes {
            let y = Self.axisHeight + Double(lane) * Self.laneHeight
            svg += "<rect x=\"\(Int(Self.gutter))\" y=\"\(Int(y))\" width=\"\(Int(Self.plotWidth))\" height=\"\(Int(Self.laneHeight))\" "
                + "fill=\"\(Self.laneFills[lane % 2])\"/>"
            svg += "<rect class=\"lane-marker\" x=\"4\" y=\"\(Int(y) + 6)\" width=\"10\" height=\"\(Int(Self.laneHeight) - 12)\" "
                + "fill=\"\(Self.laneMarkerColor)\"/>"
            svg += "<text x=\"20\" y=\"\(Int(y + Self.laneHeight / 2) + 4)\" class=\"lane\">slot \(lane + 1)</text>\n"
        }
        // Successes first: a bar is at least 3 pixels wide, so the next attempt in its lane may start over it,
        // and a failure that took a millisecond must not vanish under the success that followed it.
        let drawingOrder = report.attempts.filter { $0.outcome == .succeeded } + report.attempts.filter { $0.outcome != .succeeded }
        for attempt in drawingOrder {
            let end = attempt.end ?? span
            let x = Self.gutter + attempt.start / span * Self.plotWidth
            // A pixel short of its end, so bars that follow each other stay apart; wide enough to see.
            let barWidth = max(3, (end - attempt.start) / span * Self.plotWidth - 1)
            let y = Self.axisHeight + Double(attempt.slot) * Self.laneHeight + 4
            let isCritical = critical.contains(AttemptKey(task: attempt.task, attempt: attempt.attempt))
            let tip = Self.tip(for: attempt)
            // A narrow bar on the critical path gets a thin outline: the usual 2 pixels on each edge would
            // cover a 3-pixel bar whole, and a quick critical failure would show black, not red.
            let critical = isCritical ? (barWidth < 8 ? " critical thin" : " critical") : ""
            svg += "<rect class=\"bar\(critical)\" x=\"\(Self.number(x))\" y=\"\(Int(y))\" "
                + "width=\"\(Self.number(barWidth))\" height=\"\(Int(Self.laneHeight) - 8)\" fill=\"\(Self.color(of: attempt.outcome))\" "
                + "data-tip=\"\(Self.escape(tip))\"><title>\(Self.escape(tip))</title></rect>\n"
        }
        svg += "</svg>\n"
        var legend = "<p class=\"legend\">"
        for entry in Self.colors where entry.state != .upToDate && entry.state != .restored && entry.state != .skipped {
            let name = entry.state == .executing ? "never ended" : entry.state.rawValue
            legend += "<span><i style=\"background:\(entry.color)\"></i>\(name)</span>"
        }
        legend += "<span><i class=\"critical-key\"></i>critical path</span></p>\n"
        return "<div class=\"scroll\">\n" + svg + "</div>\n" + legend
    }

    /// Each total beside the most of it the attempts held at once, and where it comes from; each attempt's
    /// own amounts are in its bar's details and in the tables below.
    private func resources(_ totals: [ResourceTotal]) -> String {
        let peaks = ResourceUse.peaks(of: report.attempts, totals: totals)
        var table = "<table class=\"resources\">\n<tr><th>resource</th><th>peak in use</th><th>total</th><th>from</th></tr>\n"
        for (index, total) in totals.enumerated() {
            let share = total.total > 0 ? min(100, Double(peaks[index]) / Double(total.total) * 100) : 0
            table += "<tr data-resource=\"\(Self.escape(total.name))\"><td>\(Self.escape(total.name))</td>"
                + "<td class=\"peak\"><span class=\"meter\"><i style=\"width:\(Self.number(share))%\"></i></span>"
                + "\(Self.escape(Resources.text(peaks[index], of: total.name)))</td>"
                + "<td class=\"total\">\(Self.escape(Resources.text(total.total, of: total.name)))</td>"
                + "<td>\(Self.escape(Self.origin(of: total.source)))</td></tr>\n"
        }
        return table + "</table>\n"
    }

    /// Where a total comes from, in the report's words.
    private static func origin(of source: TotalSource?) -> String {
        switch source {
        case .jobs: "--jobs"
        case .option: "--resources"
        case .file: "the pipeline's resources"
        case .machine: "the machine's memory"
        case nil: "not recorded"
        }
    }

    /// `cpus 2 · mem 8G`: what an attempt held.
    private static func amounts(of attempt: TaskAttempt) -> String? {
        attempt.resources.map { $0.amounts.map { "\($0.name) \(Resources.text($0.value, of: $0.name))" }.joined(separator: " · ") }
    }

    private func criticalPath() -> String {
        guard !report.criticalPath.isEmpty else { return "<p class=\"muted\">None recorded.</p>\n" }
        var durations: [TaskID: Double] = [:]
        for attempt in report.attempts { if let end = attempt.end { durations[attempt.task, default: 0] += end - attempt.start } }
        let chips = report.criticalPath.map { task in
            let duration = durations[task].map { " " + Self.seconds($0) } ?? ""
            return "<span class=\"chip\">\(Self.escape(task.rawValue))<small>\(duration)</small></span>"
        }
        return "<p class=\"path\">" + chips.joined(separator: " → ") + "</p>\n"
    }

    private func slowest() -> String {
        let ended = report.attempts.filter { $0.end != nil }
            .sorted { ($0.end! - $0.start, $1.task.rawValue) > ($1.end! - $1.start, $0.task.rawValue) }
            .prefix(10)
        guard !ended.isEmpty else { return "<p class=\"muted\">No attempt ended.</p>\n" }
        let showsResources = report.resources != nil
        var table = "<table>\n<tr><th>task</th><th>attempt</th><th>queue</th><th>slot</th><th>duration</th><th>outcome</th>"
            + (showsResources ? "<th>resources</th>" : "") + "</tr>\n"
        for attempt in ended {
            table += "<tr><td>\(Self.escape(attempt.task.rawValue))</td><td>\(attempt.attempt)</td><td>\(Self.escape(attempt.queue))</td>"
                + "<td>\(attempt.slot + 1)</td><td>\(Self.seconds(attempt.end! - attempt.start))</td>"
                + "<td><i class=\"dot\" style=\"background:\(Self.color(of: attempt.outcome))\"></i>\(attempt.outcome.rawValue)</td>"
                + (showsResources ? "<td>\(Self.escape(Self.amounts(of: attempt) ?? ""))</td>" : "") + "</tr>\n"
        }
        return table + "</table>\n"
    }

    private func failures() -> String {
        let failed = report.finalStates.filter { $0.value == .failed }.keys.sorted()
        guard !failed.isEmpty else { return "<p class=\"muted\">No task failed.</p>\n" }
        var html = ""
        for task in failed {
            let last = report.attempts.last { $0.task == task }
            var line = "<h3>\(Self.escape(task.rawValue))</h3>\n<p>"
            if let last {
                line += "attempt \(last.attempt)"
                if let exitCode = last.exitCode { line += " · exit code \(exitCode)" }
                if let error = last.error { line += " · \(Self.escape(error))" }
                if let amounts = Self.amounts(of: last) { line += " · held \(Self.escape(amounts))" }
            } else {
                line += "failed without executing"
            }
            html += line + "</p>\n"
            if let tail = last?.logTail, !tail.isEmpty {
                html += "<pre class=\"log\">" + Self.escape(tail.joined(separator: "\n")) + "</pre>\n"
            } else {
                html += "<p class=\"muted\">It printed nothing.</p>\n"
            }
        }
        return html
    }

    private func taskGraph() -> String {
        let nodes = graph.nodes
        guard !nodes.isEmpty else { return "<p class=\"muted\">The pipeline has no tasks.</p>\n" }
        guard nodes.count <= Self.largestDrawnGraph else {
            return "<p class=\"muted\">\(nodes.count) tasks: too many to draw; see <code>jobgraph graph</code>.</p>\n"
        }
        let nodeWidth = 150.0, nodeHeight = 28.0, columnGap = 40.0, rowGap = 12.0, margin = 8.0
        var rows: [Int: Int] = [:]
        var position: [(x: Double, y: Double)] = []
        for node in nodes {
            let level = graph.levels[node.index]
            let row = rows[level, default: 0]
            rows[level] = row + 1
            position.append((margin + Double(level) * (nodeWidth + columnGap), margin + Double(row) * (nodeHeight + rowGap)))
        }
        let width = margin * 2 + Double((graph.levels.max() ?? 0) + 1) * (nodeWidth + columnGap) - columnGap
        let height = margin * 2 + Double(rows.values.max() ?? 1) * (nodeHeight + rowGap) - rowGap
        var svg = "<svg class=\"graph\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" "
            + "viewBox=\"0 0 \(Int(width)) \(Int(height))\">\n"
        svg += "<defs><marker id=\"arrow\" viewBox=\"0 0 8 8\" refX=\"8\" refY=\"4\" markerWidth=\"8\" markerHeight=\"8\" orient=\"auto\">"
            + "<path d=\"M0,0 L8,4 L0,8 z\" fill=\"#64748b\"/></marker></defs>\n"
        for node in nodes {
            for dependency in graph.dependencies[node.index] {
                let from = position[dependency], to = position[node.index]
                let x1 = from.x + nodeWidth, y1 = from.y + nodeHeight / 2, x2 = to.x, y2 = to.y + nodeHeight / 2
                let middle = (x1 + x2) / 2
                svg += "<path class=\"edge\" d=\"M\(Self.number(x1)),\(Self.number(y1)) C\(Self.number(middle)),\(Self.number(y1)) "
                    + "\(Self.number(middle)),\(Self.number(y2)) \(Self.number(x2)),\(Self.number(y2))\" marker-end=\"url(#arrow)\"/>\n"
            }
        }
        let critical = Set(report.criticalPath)
        for node in nodes {
            let state = state(of: node)
            let (x, y) = position[node.index]
            let onPath = critical.contains(node.id) || critical.contains { Self.isItem($0, of: node) }
            let name = node.displayName
            let shown = name.count > 20 ? String(name.prefix(19)) + "…" : name
            svg += "<g class=\"node\(onPath ? " critical" : "")\"><title>\(Self.escape(name)): \(state?.rawValue ?? "not run")</title>"
                + "<rect x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" width=\"\(Int(nodeWidth))\" height=\"\(Int(nodeHeight))\" rx=\"6\" "
                + "fill=\"\(state.map(Self.color(of:)) ?? "#ffffff")\"/>"
                + "<text x=\"\(Self.number(x + 8))\" y=\"\(Self.number(y + 18))\">\(Self.escape(shown))</text></g>\n"
        }
        return "<div class=\"scroll\">\n" + svg + "</svg>\n</div>\n"
    }

    // MARK: - Helpers

    private struct AttemptKey: Hashable {
        var task: TaskID
        var attempt: Int
    }

    /// The attempts to outline: each task on the critical path, all its attempts; a fan-out on it (which
    /// has no attempt of its own) by the item that ended last, since that one held up what came next.
    private func criticalAttempts() -> Set<AttemptKey> {
        var keys: Set<AttemptKey> = []
        for task in report.criticalPath {
            let own = report.attempts.filter { $0.task == task }
            if !own.isEmpty {
                for attempt in own { keys.insert(AttemptKey(task: task, attempt: attempt.attempt)) }
            } else if let last = report.attempts.filter({ $0.task.rawValue.hasPrefix(task.rawValue + "[") })
                        .max(by: { ($0.end ?? .infinity) < ($1.end ?? .infinity) }) {
                keys.insert(AttemptKey(task: last.task, attempt: last.attempt))
            }
        }
        return keys
    }

    /// A node's state in the run; for a fan-out whose items the run added, the worst of its items'.
    private func state(of node: TaskNode) -> TaskState? {
        if let state = report.finalStates[node.id] { return state }
        let items = report.finalStates.filter { Self.isItem($0.key, of: node) }.map(\.value)
        let order: [TaskState] = [.failed, .cancelled, .executing, .succeeded, .restored, .upToDate, .skipped]
        return order.first { items.contains($0) } ?? items.first
    }

    private static func isItem(_ task: TaskID, of node: TaskNode) -> Bool {
        node.isDynamicFanOut && task.rawValue.hasPrefix(node.id.rawValue + "[")
    }

    private static func tip(for attempt: TaskAttempt) -> String {
        var parts = ["\(attempt.task.rawValue)", attempt.attempt > 1 ? "attempt \(attempt.attempt)" : nil,
                     attempt.end.map { "duration \(seconds($0 - attempt.start))" } ?? "never ended",
                     attempt.exitCode.map { "exit code \($0)" }, "queue \(attempt.queue)", attempt.outcome.rawValue].compactMap { $0 }
        if let error = attempt.error { parts.append(error) }
        if let amounts = amounts(of: attempt) { parts.append("held " + amounts) }
        return parts.joined(separator: " · ")
    }

    /// A round step giving about eight ticks over `span` seconds.
    static func tickStep(_ span: Double) -> Double {
        let raw = span / 8
        let magnitude = pow(10, (log10(raw)).rounded(.down))
        for factor in [1.0, 2, 5, 10] where raw <= factor * magnitude { return factor * magnitude }
        return 10 * magnitude
    }

    /// `0.25s`, `12.3s`, `2m05s`.
    static func seconds(_ value: Double) -> String {
        if value >= 60 {
            let whole = Int(value.rounded())
            return "\(whole / 60)m" + (whole % 60 < 10 ? "0" : "") + "\(whole % 60)s"
        }
        if value >= 10 { return String(format: "%.1fs", value) }
        if value >= 1 { return String(format: "%.2fs", value) }
        return String(format: "%.3fs", value)
    }

    static func number(_ value: Double) -> String { String(format: "%.1f", value) }

    /// `text` safe in HTML text and in a double-quoted attribute.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    static let style = """
        body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #0f172a; background: #ffffff; }
        h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 28px 0 8px; } h3 { font-size: 14px; margin: 16px 0 4px; }
        .muted { color: #64748b; font-weight: normal; }
        .outcome { display: inline-block; padding: 2px 8px; border-radius: 4px; background: #e2e8f0; margin: 4px 0; }
        .outcome-succeeded { background: #dcfce7; } .outcome-failed { background: #fee2e2; } .outcome-interrupted, .outcome-terminated { background: #fef3c7; }
        .scroll { overflow-x: auto; }
        svg text { font: 11px system-ui, sans-serif; fill: #0f172a; }
        svg text.axis { text-anchor: middle; fill: #64748b; }
        svg line.grid { stroke: #e2e8f0; }
        rect.bar.critical { stroke: #111827; stroke-width: 2; }
        rect.bar.critical.thin { stroke-width: 1; }
        rect.bar:hover { opacity: 0.8; }
        .legend span { margin-right: 14px; white-space: nowrap; }
        .legend i, i.dot { display: inline-block; width: 10px; height: 10px; margin-right: 4px; border-radius: 2px; vertical-align: -1px; }
        .legend i.critical-key { border: 2px solid #111827; width: 8px; height: 8px; }
        .chip { display: inline-block; background: #f1f5f9; border: 2px solid #111827; border-radius: 4px; padding: 1px 6px; }
        .chip small { color: #64748b; margin-left: 4px; }
        table { border-collapse: collapse; } th, td { text-align: left; padding: 3px 12px 3px 0; border-bottom: 1px solid #e2e8f0; }
        .meter { display: inline-block; width: 80px; height: 8px; background: #e2e8f0; border-radius: 2px; margin-right: 6px; }
        .meter i { display: block; height: 100%; background: #0d9488; border-radius: 2px; }
        pre.log { background: #0f172a; color: #e2e8f0; padding: 8px 12px; border-radius: 4px; overflow-x: auto; max-height: 240px; }
        g.node rect { stroke: #475569; stroke-width: 1; } g.node.critical rect { stroke: #111827; stroke-width: 3; }
        path.edge { fill: none; stroke: #94a3b8; stroke-width: 1.5; }
        #tip { position: fixed; pointer-events: none; background: #0f172a; color: #f8fafc; padding: 4px 8px; border-radius: 4px; font-size: 12px; }
        """

    /// Shows a bar's details beside the pointer; marks the page when it ran, and records any error, so a
    /// headless browser's DOM tells whether the script worked.
    static let script = """
        window.addEventListener("error", function (event) { document.body.dataset.error = String(event.message); });
        (function () {
          var tip = document.getElementById("tip");
          document.querySelectorAll("rect.bar").forEach(function (bar) {
            bar.addEventListener("mousemove", function (event) {
              tip.textContent = bar.getAttribute("data-tip");
              tip.style.left = (event.clientX + 12) + "px";
              tip.style.top = (event.clientY + 12) + "px";
              tip.hidden = false;
            });
            bar.addEventListener("mouseleave", function () { tip.hidden = true; });
          });
          document.body.dataset.script = "ok";
        })();
        """
}
