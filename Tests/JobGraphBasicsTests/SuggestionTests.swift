import JobGraphBasics
import Testing

@Suite struct SuggestionTests {
    @Test func typosFindTheIntendedWord() {
        let keys = ["needs", "run", "queue", "priority", "retries", "retry_delay"]
        #expect(Suggestion.closest(to: "neds", in: keys) == "needs")
        #expect(Suggestion.closest(to: "nedes", in: keys) == "needs")
        #expect(Suggestion.closest(to: "priorty", in: keys) == "priority")
        #expect(Suggestion.closest(to: "retires", in: keys) == "retries")
        #expect(Suggestion.closest(to: "colour", in: keys) == nil)
        #expect(Suggestion.hint(for: "rn", in: keys) == "; did you mean 'run'?")
    }

    @Test func listsReadAsASentence() {
        #expect(Suggestion.list(["a"]) == "'a'")
        #expect(Suggestion.list(["a", "b", "c"]) == "'a', 'b' or 'c'")
    }
}

@Suite struct DurationTextTests {
    @Test(arguments: [("10", 10.0), ("1.5", 1.5), ("90s", 90), ("10m", 600), ("2h", 7200), ("1h30m", 5400), ("250ms", 0.25)])
    func durationsParse(text: String, seconds: Double) {
        #expect(DurationText.seconds(from: text) == seconds)
    }

    @Test(arguments: ["", "10 minutes", "m", "10x", "-5", "1.2.3s", "s10"])
    func nonDurationsAreRefused(text: String) {
        #expect(DurationText.seconds(from: text) == nil)
    }
}

@Suite struct DiagnosticsTests {
    @Test func sortedByPositionWithNotesKeptAfterTheirError() {
        var diagnostics = Diagnostics()
        diagnostics.error("later", at: SourceLocation(file: "f", line: 9, column: 1))
        diagnostics.note("hop", at: SourceLocation(file: "f", line: 1, column: 1))
        diagnostics.error("earlier", at: SourceLocation(file: "f", line: 2, column: 5))
        diagnostics.error("earlier", at: SourceLocation(file: "f", line: 2, column: 5))
        #expect(diagnostics.sorted.map(\.message) == ["earlier", "later", "hop"])
        #expect(diagnostics.errorCount == 2)
    }
}

@Suite struct DiagnosticsNotesTests {
    @Test func aNoteRepeatsWhenItsErrorIsNewAndDropsWhenItsErrorRepeats() {
        let hop = SourceLocation(file: "f", line: 3, column: 3)
        var diagnostics = Diagnostics()
        diagnostics.error("cycle one", at: SourceLocation(file: "f", line: 5, column: 1))
        diagnostics.note("'x' needs 'y' here", at: hop)
        diagnostics.error("cycle two", at: SourceLocation(file: "f", line: 7, column: 1))
        diagnostics.note("'x' needs 'y' here", at: hop)
        diagnostics.error("cycle two", at: SourceLocation(file: "f", line: 7, column: 1))
        diagnostics.note("'x' needs 'y' here", at: hop)
        #expect(diagnostics.all.map(\.message) == ["cycle one", "'x' needs 'y' here", "cycle two", "'x' needs 'y' here"])
    }
}

@Suite struct DurationTextFormattingTests {
    @Test(arguments: [(90.0, "90s"), (600, "10m"), (7200, "2h"), (5400, "90m"), (1.5, "1.5s"), (0, "0s")])
    func durationsAreWrittenAsAFileWouldWriteThem(seconds: Double, text: String) {
        #expect(DurationText.text(forSeconds: seconds) == text)
        #expect(DurationText.seconds(from: text) == seconds)
    }
}
