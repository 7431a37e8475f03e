import JobGraphBasics
import PipelineModel
import Testing

@Suite struct ConditionDecodingTests {
    @Test func everyConditionKindIsDecoded() throws {
        let loaded = loadTask("""
            run: echo
            conditions:
              - file_exists: "{{ dir }}/Package.swift"
              - env: HOME
              - command: test -d .git
              - reachable: db.local:5432
              - reachable: "[::1]:8080"
            """, vars: "dir: src")
        #expect(loaded.lines == [])
        let conditions = try #require(loaded.task("job")?.conditions)
        #expect(conditions.map(\.keyword) == ["file_exists", "env", "command", "reachable", "reachable"])
        guard case .fileExists(let path) = conditions[0], case .environmentSet(let name) = conditions[1],
              case .command(let command) = conditions[2], case .reachable(let host, let port) = conditions[3],
              case .reachable(let host6, let port6) = conditions[4]
        else { Issue.record("conditions decoded to the wrong kinds"); return }
        #expect(path.placeholders == ["dir@8:23"])
        #expect(name == "HOME")
        #expect(command.description == "test -d .git")
        #expect(host == "db.local")
        #expect(port == 5432)
        #expect(host6 == "::1")
        #expect(port6 == 8080)
    }

    @Test(arguments: [
        ("127.0.0.1:0", "invalid port '0' in 'reachable'; expected a number from 1 to 65535"),
        ("127.0.0.1:65536", "invalid port '65536' in 'reachable'; expected a number from 1 to 65535"),
        ("127.0.0.1:http", "invalid port 'http' in 'reachable'; expected a number from 1 to 65535"),
        (":80", "invalid address ':80' for 'reachable'; expected 'host:port', like '127.0.0.1:5432'"),
        ("5432", "invalid address '5432' for 'reachable'; expected 'host:port', like '127.0.0.1:5432'"),
    ])
    func badAddressesAreRefused(address: String, message: String) {
        let loaded = loadTask("run: echo\nconditions:\n  - reachable: '\(address)'")
        #expect(loaded.messages == [message])
    }

    @Test func portBoundsAreAccepted() {
        #expect(loadTask("run: echo\nconditions: [{reachable: 'h:1'}, {reachable: 'h:65535'}]").lines == [])
    }

    @Test(arguments: [
        ("- make test", "expected a condition such as '- file_exists: PATH' in 'conditions', found 'make test'; a condition is one of 'file_exists', 'env', 'command' or 'reachable'"),
        ("- {}", "expected one of 'file_exists', 'env', 'command' or 'reachable' in a condition, found an empty mapping"),
        ("- env: A=B", "invalid environment variable name 'A=B' for 'env'; it may not contain '='"),
        ("- command: ''", "'command' is empty; expected a shell command"),
        ("- file_exists: [a]", "expected a path for 'file_exists', found a list"),
    ])
    func badConditionsAreReported(item: String, message: String) {
        #expect(loadTask("run: echo\nconditions:\n  \(item)").messages == [message])
    }

    @Test func serviceReadyRefusesEnv() {
        let loaded = loadTask("run: ./server\nservice: {ready: {env: HOME}}")
        #expect(loaded.messages == [
            "unknown key 'env' in 'ready' of 'service' of task 'job'; expected 'reachable', 'file_exists' or 'command'",
        ])
    }

    @Test func serviceReadyTakesOneCondition() {
        let loaded = loadTask("run: ./server\nservice:\n  ready: {reachable: 'h:1', command: 'true'}")
        #expect(loaded.lines == [
            "pipeline.yaml:6:33: error: 'ready' of 'service' of task 'job' takes one condition, but 'reachable' and 'command' are both given",
        ])
    }
}
