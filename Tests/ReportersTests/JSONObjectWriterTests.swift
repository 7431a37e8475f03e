import Foundation
import Testing
@testable import Reporters

/// Task ids, commands' output lines and error messages reach `--events` as JSON strings: whatever they hold,
/// a JSON reader gets them back unchanged, and JavaScript can embed the line.
struct JSONObjectWriterTests {
    @Test(arguments: [
        "plain-task_1", "out/dir name/file.txt", "say \"hi\"", "back\\slash", "two\nlines\r\n", "tab\there",
        "bell\u{07} nul\u{00} esc\u{1B}", "line\u{2028}separator\u{2029}", "café → ✓ 🚀", "",
    ])
    func everyStringReadsBackUnchanged(value: String) throws {
        var writer = JSONObjectWriter()
        writer.add("value", value)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(writer.object.utf8)) as? [String: String])
        #expect(object["value"] == value)
        #expect(!writer.object.contains("\u{2028}") && !writer.object.contains("\u{2029}") && !writer.object.contains("\n"))
    }

    @Test func escapesAreTheShortOnes() {
        var writer = JSONObjectWriter()
        writer.add("a", "q\"b\\n\nc\u{01}\u{2028}")
        writer.add("b", "é")
        #expect(writer.object == #"{"a":"q\"b\\n\nc\u0001\u2028","b":"é"}"#)
    }
}
