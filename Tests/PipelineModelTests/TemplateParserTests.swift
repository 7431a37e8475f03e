import JobGraphBasics
import PipelineModel
import Testing

@Suite struct TemplateParserTests {
    private func command(_ yaml: String, vars: String = "name: x\nother: y") throws -> Template {
        let loaded = loadTask(yaml, vars: vars)
        #expect(loaded.lines == [])
        guard case .run(let commands)? = loaded.task("job")?.action, let first = commands.first else {
            throw TemplateTestFailure()
        }
        return first
    }

    private struct TemplateTestFailure: Error {}

    @Test func textIsSplitIntoLiteralsAndVariables() throws {
        let template = try command("run: cp {{name}} {{ other }}/{{   name   }}.bak")
        #expect(template.segments.count == 7)
        guard case .literal("cp ") = template.segments[0], case .literal(" ") = template.segments[2],
              case .literal("/") = template.segments[4], case .literal(".bak") = template.segments[6]
        else { Issue.record("unexpected literals: \(template.segments)"); return }
        #expect(template.variableNames == ["name", "other", "name"])
        #expect(template.description == "cp {{ name }} {{ other }}/{{ name }}.bak")
        #expect(!template.isLiteral)
    }

    @Test func textWithoutPlaceholdersIsOneLiteral() throws {
        let template = try command("run: echo '{ a }' }} {x}")
        #expect(template.isLiteral)
        #expect(template.description == "echo '{ a }' }} {x}")
        #expect(template.location == SourceLocation(file: "pipeline.yaml", line: 7, column: 10))
    }

    // The task's `run` is on line 7 (after `version`, `vars` with two entries, `tasks`, `job`), its value at column 10.

    @Test func plainScalarColumns() throws {
        #expect(try command("run: a {{ name }} b {{other}}").placeholders == ["name@7:12", "other@7:25"])
    }

    @Test func singleQuotedColumnsCountDoubledQuotes() throws {
        #expect(try command("run: 'it''s {{ name }}'").placeholders == ["name@7:17"])
    }

    @Test func doubleQuotedColumnsCountEscapes() throws {
        #expect(try command("run: \"say \\\"{{ name }}\\\" \\t {{ other }}\"").placeholders == ["name@7:17", "other@7:33"])
    }

    @Test func columnsCountCharactersNotBytes() throws {
        #expect(try command("run: echo héllo→{{ name }}").placeholders == ["name@7:21"])
    }

    @Test func literalBlockScalarLinesAndColumns() throws {
        let template = try command("run: |  # not {{ here }}\n  echo one\n    echo {{ name }}\n  echo {{ other }} {{ name }}")
        #expect(template.placeholders == ["name@9:14", "other@10:12", "name@10:24"])
    }

    @Test func foldedBlockScalar() throws {
        #expect(try command("run: >-\n  echo\n  {{ name }}").placeholders == ["name@9:7"])
    }

    @Test func multiLinePlainScalar() throws {
        #expect(try command("run: echo\n  {{ name }} and\n    {{ other }}").placeholders == ["name@8:7", "other@9:9"])
    }

    @Test func flowSequenceItems() throws {
        let loaded = loadTask("parallel: [\"a {{ name }}\", '{{ other }}']", vars: "name: x\nother: y")
        guard case .parallel(let commands)? = loaded.task("job")?.action else { Issue.record("expected parallel"); return }
        #expect(commands.map(\.placeholders) == [["name@7:19"], ["other@7:33"]])
    }

    @Test func crlfLineEndings() {
        let loaded = load("version: 1\r\ntasks:\r\n  a:\r\n    run: |\r\n      echo\r\n      {{ nope }}\r\n")
        #expect(loaded.lines == ["pipeline.yaml:6:7: error: unknown variable 'nope' in template; define it under 'vars'"])
    }

    @Test func escapedBracesFallBackToTheScalarStart() {
        // `\x7b` is a brace only after unescaping, so the written text cannot show where it is.
        let loaded = loadTask("run: \"\\x7b{ nope }}\"")
        #expect(loaded.lines == ["pipeline.yaml:4:10: error: unknown variable 'nope' in template; define it under 'vars'"])
    }

    @Test func tripleBracesAreNotAPlaceholder() {
        let loaded = loadTask("run: echo {{{ name }}}", vars: "name: x")
        #expect(loaded.messages == ["invalid placeholder '{{{ name }}'; write '{{ name }}' with the name of a variable"])
    }

    @Test(arguments: [
        ("run: echo {{ name", "unterminated '{{' in template; close it with '}}'"),
        ("run: echo {{}}", "invalid placeholder '{{}}'; write '{{ name }}' with the name of a variable"),
        ("run: echo {{ a b }}", "invalid placeholder '{{ a b }}'; write '{{ name }}' with the name of a variable"),
        ("run: echo {{ 1x }}", "invalid placeholder '{{ 1x }}'; write '{{ name }}' with the name of a variable"),
        ("run: echo {{ name. }}", "invalid placeholder '{{ name. }}'; write '{{ name }}' with the name of a variable"),
        ("run: echo {{ nmae }}", "unknown variable 'nmae' in template; did you mean 'name'?"),
        ("run: echo {{ zzz }}", "unknown variable 'zzz' in template; define it under 'vars'"),
        ("run: echo {{ name.first }}", "variable 'name' is a string and has no field 'first'; write '{{ name }}'"),
        ("run: echo {{ item }}", "'item' is only defined in a task with 'foreach'"),
        ("foreach: [a]\nrun: echo {{ item.url }}", "'item.url' needs 'foreach: {from: FILE}'; items listed in the file are strings, so write '{{ item }}'"),
        ("foreach: [a]\nrun: echo {{ itme }}", "unknown variable 'itme' in template; did you mean 'item'?"),
    ])
    func badPlaceholdersAreReportedAtTheirBraces(yaml: String, message: String) {
        let loaded = loadTask(yaml, vars: "name: x")
        #expect(loaded.messages == [message])
        let line = yaml.split(separator: "\n").last.map(String.init) ?? yaml
        let braces = line.range(of: "{{").map { line.distance(from: line.startIndex, to: $0.lowerBound) } ?? 0
        #expect(loaded.diagnostics.all.first?.location?.column == braces + 5)
    }

    @Test func everyBadPlaceholderInOneStringIsReported() {
        let loaded = loadTask("run: echo {{ a }} {{ name }} {{ b }}", vars: "name: x")
        #expect(loaded.lines == [
            "pipeline.yaml:6:15: error: unknown variable 'a' in template; define it under 'vars'",
            "pipeline.yaml:6:34: error: unknown variable 'b' in template; define it under 'vars'",
        ])
    }

    @Test func templatedFieldsAreAllChecked() {
        let loaded = load("""
            version: 1
            env: {E: "{{ e1 }}"}
            tasks:
              a:
                run: "{{ r1 }}"
                cwd: "{{ c1 }}"
                env: {X: "{{ e2 }}"}
                inputs: ["{{ i1 }}"]
                outputs: ["{{ o1 }}"]
                on_success: "{{ h1 }}"
                on_failure: "{{ h2 }}"
                conditions: [{file_exists: "{{ f1 }}"}, {command: "{{ k1 }}"}]
                service: {ready: {command: "{{ k2 }}"}}
              b: {parallel: ["{{ p1 }}"]}
              c: {download: {url: "{{ u1 }}", to: "{{ t1 }}"}}
              d: {filter: {input: "{{ in1 }}", output: "{{ out1 }}.png", effect: invert}}
              e: {foreach: {from: "{{ from1 }}"}, run: echo}
            on_success: "{{ h3 }}"
            on_failure: "{{ h4 }}"
            """)
        let names = loaded.messages.compactMap { $0.split(separator: "'").dropFirst().first.map(String.init) }
        #expect(names == ["e1", "r1", "c1", "e2", "i1", "o1", "h1", "h2", "f1", "k1", "k2", "p1", "u1", "t1", "in1", "out1", "from1", "h3", "h4"])
    }
}
