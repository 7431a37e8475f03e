import JobGraphBasics
import Testing
@testable import YAMLNodes

private func load(_ text: String, limits: YAMLLimits = .standard) -> (YAMLNode?, [String]) {
    var diagnostics = Diagnostics()
    let node = YAMLLoader.load(text, file: "t.yaml", limits: limits, diagnostics: &diagnostics)
    return (node, diagnostics.sorted.map { "\($0.location.map(\.description) ?? "-"): \($0.message)" })
}

private func value(_ node: YAMLNode?, _ key: String) -> YAMLNode? {
    node?.mapping?.first { $0.keyText == key }?.value
}

@Suite struct YAMLLoaderTests {
    @Test func keysAndValuesKeepTheirOneBasedLocations() throws {
        let (root, errors) = load("version: 1\ntasks:\n  build:\n    run: make\n")
        #expect(errors.isEmpty)
        let tasks = try #require(value(root, "tasks"))
        let entry = try #require(tasks.mapping?.first)
        #expect(entry.key.location == SourceLocation(file: "t.yaml", line: 3, column: 3))
        let run = try #require(value(entry.value, "run"))
        #expect(run.location == SourceLocation(file: "t.yaml", line: 4, column: 10))
        #expect(run.string == "make")
    }

    @Test(arguments: [
        ("NO", YAMLScalarValue.string("NO")), ("off", .string("off")), ("yes", .string("yes")),
        ("true", .bool(true)), ("False", .bool(false)), ("~", .null), ("null", .null),
        ("42", .integer(42)), ("-7", .integer(-7)), ("0x1F", .integer(31)), ("0o17", .integer(15)),
        ("1.5", .float(1.5)), ("1e3", .float(1000)), (".5", .float(0.5)), ("1_000", .string("1_000")),
        ("08:00", .string("08:00")), ("10m", .string("10m")), ("'true'", .string("true")), ("\"42\"", .string("42")),
    ])
    func plainScalarsResolveByTheCoreSchema(text: String, expected: YAMLScalarValue) {
        let (root, errors) = load("key: \(text)\n")
        #expect(errors.isEmpty)
        #expect(value(root, "key")?.scalar?.value == expected)
    }

    @Test func aliasesCopyTheAnchoredNodeAndMergeKeysFillMissingKeys() throws {
        let (root, errors) = load("""
            base: &base {retries: 2, queue: net}
            task:
              <<: *base
              queue: local
            list: [*base, *base]
            """)
        #expect(errors.isEmpty)
        let task = try #require(value(root, "task"))
        #expect(value(task, "queue")?.string == "local")
        #expect(value(task, "retries")?.scalar?.value == .integer(2))
        #expect(value(root, "list")?.sequence?.count == 2)
    }

    @Test func billionLaughsIsRefusedQuickly() {
        var text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for level in 1...9 {
            let refs = Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ")
            text += "a\(level): &a\(level) [\(refs)]\n"
        }
        let (root, errors) = load(text)
        #expect(root == nil)
        #expect(errors.count == 1)
        #expect(errors.first?.contains("billion laughs") == true)
    }

    @Test func duplicateKeysAreErrorsAtTheSecondKey() {
        let (root, errors) = load("tasks:\n  a: {run: x}\n  a: {run: y}\n")
        #expect(root == nil)
        #expect(errors == ["t.yaml:3:3: duplicate key 'a' (first at line 2, column 3)"])
    }

    @Test(arguments: [3, 16, 17, 40])
    func duplicateKeysAreFoundInMappingsOfAnySize(keyCount: Int) {
        let keys = (0..<keyCount).map { "k\($0): \($0)" }.joined(separator: "\n")
        let (root, errors) = load(keys + "\nk1: again\n")
        #expect(root == nil)
        #expect(errors == ["t.yaml:\(keyCount + 1):1: duplicate key 'k1' (first at line 2, column 1)"])
        #expect(load(keys + "\n").1.isEmpty)
    }

    @Test func aSecondDocumentIsAnError() {
        let (_, errors) = load("a: 1\n---\nb: 2\n")
        #expect(errors == ["t.yaml:2:1: the file holds more than one YAML document; put everything in the first"])
    }

    @Test func anEmptyFileIsAnError() {
        #expect(load("").1 == ["t.yaml:1:1: the file is empty; expected a YAML document"])
        #expect(load("# only a comment\n").1 == ["t.yaml:1:1: the file is empty; expected a YAML document"])
    }

    @Test func invalidUTF8IsReportedWhereItStands() {
        var diagnostics = Diagnostics()
        let bytes = Array("a: 1\nb: caf".utf8) + [0xE9, 0x0A]
        let node = YAMLLoader.load(bytes, file: "t.yaml", diagnostics: &diagnostics)
        #expect(node == nil)
        let error = diagnostics.sorted.first
        #expect(error?.location == SourceLocation(file: "t.yaml", line: 2, column: 7))
        #expect(error?.message.hasPrefix("the file is not valid UTF-8") == true)
    }

    @Test func deepNestingIsRefusedAtTheLimit() {
        let text = String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)
        let (root, errors) = load(text, limits: YAMLLimits(depth: 50))
        #expect(root == nil)
        #expect(errors == ["t.yaml:1:51: nesting is deeper than 50 levels"])
    }

    @Test func syntaxErrorsNameTheProblemAndItsContext() {
        let (_, errors) = load("tasks:\n  a:\n    run: x\n   bad\n")
        #expect(errors.count == 1)
        #expect(errors.first?.hasPrefix("t.yaml:4:") == true)
        #expect(errors.first?.contains("YAML syntax error:") == true)
    }

    @Test func undefinedAliasIsAnError() {
        #expect(load("a: *nowhere\n").1 == ["t.yaml:1:4: alias '*nowhere' refers to no anchor '&nowhere' defined before it"])
    }

    @Test func unknownTagsAreErrors() {
        #expect(load("a: !!binary aGk=\n").1 == ["t.yaml:1:4: unsupported YAML tag 'tag:yaml.org,2002:binary'"])
        #expect(load("a: !!int abc\n").1 == ["t.yaml:1:4: 'abc' is not a valid !!int"])
    }

    // Files from `EventFeed.backgroundThreshold` on are parsed by libyaml on a thread of its own, ahead
    // of the composer: what a user sees must not tell the two apart.

    /// `count` one-line entries: about 24 bytes each, so 20,000 pass the threshold.
    private static func entries(_ count: Int, prefix: String = "k") -> String {
        (0..<count).map { "\(prefix)\($0): {run: x\($0)}\n" }.joined()
    }

    @Test func aLargeFileKeepsEveryEntryAndItsLocation() throws {
        let text = Self.entries(20_000)
        #expect(text.utf8.count > EventFeed.backgroundThreshold)
        let (root, errors) = load(text)
        #expect(errors.isEmpty)
        let mapping = try #require(root?.mapping)
        #expect(mapping.count == 20_000)
        let last = try #require(mapping.last)
        #expect(last.keyText == "k19999")
        #expect(last.key.location == SourceLocation(file: "t.yaml", line: 20_000, column: 1))
        #expect(value(last.value, "run")?.location == SourceLocation(file: "t.yaml", line: 20_000, column: 15))
    }

    @Test func aSyntaxErrorAtTheEndOfALargeFileNamesItsLine() {
        let (root, errors) = load(Self.entries(20_000) + "bad: [unclosed\n")
        #expect(root == nil)
        #expect(errors.count == 1)
        #expect(errors.first?.hasPrefix("t.yaml:20002:") == true)
        #expect(errors.first?.contains("YAML syntax error:") == true)
    }

    @Test func invalidUTF8AtTheEndOfALargeFileIsReportedWhereItStands() {
        var diagnostics = Diagnostics()
        let bytes = Array((Self.entries(20_000) + "b: caf").utf8) + [0xE9, 0x0A]
        #expect(YAMLLoader.load(bytes, file: "t.yaml", diagnostics: &diagnostics) == nil)
        let error = diagnostics.sorted.first
        #expect(error?.location == SourceLocation(file: "t.yaml", line: 20_001, column: 7))
        #expect(error?.message.hasPrefix("the file is not valid UTF-8") == true)
    }

    @Test func aSecondDocumentStopsALargeFileBeforeTheErrorsInIt() {
        // The reader runs ahead into the second document and fails there; only the stop is reported.
        let (root, errors) = load("a: 1\n---\n" + Self.entries(20_000) + "bad: [unclosed\n")
        #expect(root == nil)
        #expect(errors == ["t.yaml:2:1: the file holds more than one YAML document; put everything in the first"])
    }

    @Test func tooDeepNestingStopsALargeFileEarly() {
        // The composer stops at the first lines while the reader waits with a full queue behind it.
        let text = String(repeating: "[", count: 60) + String(repeating: "]", count: 60) + "\n"
        let (root, errors) = load("a: " + text + Self.entries(40_000, prefix: "b"), limits: YAMLLimits(depth: 50))
        #expect(root == nil)
        #expect(errors == ["t.yaml:1:53: nesting is deeper than 50 levels"])
    }
}
