import JobGraphBasics
import PipelineModel
import Testing

@Suite struct TaskSpecDecodingTests {
    @Test func everyTaskKeyIsDecoded() throws {
        let loaded = load("""
            version: 1
            vars:
              dir: build
            queues:
              cpu: {max_concurrent: 2}
            tasks:
              setup: {run: ./setup.sh}
              test:
                description: Runs the tests
                run: swift test
                needs: [setup]
                queue: cpu
                priority: very-high
                qos: background
                cwd: "{{ dir }}"
                env: {CI: "1", MODE: "{{ dir }}-{{ item }}"}
                timeout: 1h30m
                retries: 2
                retry_delay: 250ms
                when: always
                conditions:
                  - file_exists: Package.swift
                exclusive: [database, network]
                inputs: ["Sources/**/*.swift"]
                outputs: [".build/{{ item }}"]
                foreach: [a, b]
                on_success: echo ok {{ item }}
                on_failure: echo failed
                allow_failure: true
            """)
        #expect(loaded.lines == [])
        let task = try #require(loaded.task("test"))
        #expect(task.id == "test")
        #expect(task.location == SourceLocation(file: "pipeline.yaml", line: 8, column: 3))
        #expect(task.description == "Runs the tests")
        guard case .run(let commands) = task.action else { Issue.record("expected run"); return }
        #expect(commands.map(\.description) == ["swift test"])
        #expect(task.needs.map(\.value) == ["setup"])
        #expect(task.needs.first?.location == SourceLocation(file: "pipeline.yaml", line: 11, column: 13))
        #expect(task.queue?.value.rawValue == "cpu")
        #expect(task.priority == .veryHigh)
        #expect(task.qos == .background)
        #expect(task.cwd?.placeholders == ["dir@15:11"])
        #expect(task.environment.map(\.name) == ["CI", "MODE"])
        #expect(task.environment.map(\.value.description) == ["1", "{{ dir }}-{{ item }}"])
        #expect(task.timeout == 5400)
        #expect(task.retries == 2)
        #expect(task.retryDelay == 0.25)
        #expect(task.when == .always)
        #expect(task.conditions.map(\.keyword) == ["file_exists"])
        #expect(task.exclusive == ["database", "network"])
        #expect(task.inputs.map(\.description) == ["Sources/**/*.swift"])
        #expect(task.outputs.map(\.description) == [".build/{{ item }}"])
        guard case .items(let items)? = task.foreach else { Issue.record("expected listed foreach"); return }
        #expect(items.map(\.value) == ["a", "b"])
        #expect(task.onSuccess?.description == "echo ok {{ item }}")
        #expect(task.onFailure?.description == "echo failed")
        #expect(task.allowFailure)
        #expect(task.service == nil)
    }

    @Test func unsetKeysTakeTheContractDefaults() throws {
        let task = try #require(loadTask("run: make").task("job"))
        #expect(task.priority == .normal)
        #expect(task.when == .success)
        #expect(task.retries == 0)
        #expect(task.retryDelay == 1)
        #expect(task.timeout == nil)
        #expect(task.qos == nil)
        #expect(task.queue == nil)
        #expect(task.allowFailure == false)
        #expect(task.description == nil)
    }

    @Test func singleStringsStandForListsOfOne() throws {
        let loaded = load("""
            version: 1
            tasks:
              a: {run: echo a}
              b: {run: echo b, needs: a, exclusive: db, inputs: src, outputs: out}
            """)
        let task = try #require(loaded.task("b"))
        #expect(task.needs.map(\.value) == ["a"])
        #expect(task.exclusive == ["db"])
        #expect(task.inputs.map(\.description) == ["src"])
        #expect(task.outputs.map(\.description) == ["out"])
    }

    @Test func repeatedNeedIsKeptOnce() throws {
        let loaded = load("version: 1\ntasks:\n  a: {run: echo}\n  b: {run: echo, needs: [a, a]}\n")
        #expect(loaded.task("b")?.needs.map(\.value) == ["a"])
    }

    @Test func foreachFromFileAllowsItemFields() throws {
        let loaded = loadTask("""
            foreach: {from: "{{ dir }}/photos.json"}
            download: {url: "http://h/{{ item.url }}", to: "out/{{ item.name }}.jpg"}
            """, vars: "dir: build")
        #expect(loaded.lines == [])
        let task = try #require(loaded.task("job"))
        guard case .file(let source)? = task.foreach else { Issue.record("expected foreach from a file"); return }
        #expect(source.placeholders == ["dir@6:22"])
        guard case .download(let download) = task.action else { Issue.record("expected download"); return }
        #expect(download.url.placeholders == ["item.url@7:31"])
    }

    @Test func itemCannotBeUsedInForeachSource() {
        let loaded = loadTask("foreach: {from: \"{{ item }}.json\"}\nrun: echo")
        #expect(loaded.messages == ["'item' cannot be used in 'foreach' itself; the items are not known until it is read"])
    }

    @Test func numbersAndWordsAreForeachItemsAsWritten() throws {
        let task = try #require(loadTask("foreach: [1, 2.50, NO, true]\nrun: echo {{ item }}").task("job"))
        guard case .items(let items)? = task.foreach else { Issue.record("expected listed foreach"); return }
        #expect(items.map(\.value) == ["1", "2.50", "NO", "true"])
    }

    @Test(arguments: ["'a]'", "''", "\"a\\nb\""])
    func foreachItemsMustFitInATaskID(item: String) {
        let loaded = loadTask("foreach: [\(item)]\nrun: echo")
        #expect(loaded.messages.count == 1)
        #expect(loaded.messages.first?.hasSuffix("cannot be part of a task id; use a non-empty item without '[', ']' or line breaks") == true)
    }

    @Test func serviceIsDecoded() throws {
        let loaded = loadTask("""
            run: python3 -m http.server 8765
            service:
              ready: {reachable: 127.0.0.1:8765}
              timeout: 10s
            """)
        let service = try #require(loaded.task("job")?.service)
        #expect(service.timeout == 10)
        guard case .reachable(let host, let port)? = service.ready else { Issue.record("expected reachable"); return }
        #expect(host == "127.0.0.1")
        #expect(port == 8765)
    }

    @Test func serviceWithoutReadyIsAllowed() throws {
        let service = try #require(loadTask("run: ./daemon\nservice: {}").task("job")?.service)
        #expect(service.ready == nil)
        #expect(service.timeout == nil)
    }

    @Test(arguments: [
        ("retries: 1.5", "expected a whole number for 'retries', found a number '1.5'"),
        ("retries: '2'", "expected an integer for 'retries', found '2'"),
        ("allow_failure: 1", "expected true or false for 'allow_failure', found an integer '1'"),
        ("timeout: 0", "'timeout' must be longer than 0 seconds, found '0'"),
        ("timeout: [1]", "expected a duration for 'timeout', found a list"),
        ("retry_delay: -1s", "invalid duration '-1s' for 'retry_delay'; use a number of seconds or a value like '90s', '10m', '1h'"),
        ("priority: [high]", "expected one of 'very-low', 'low', 'normal', 'high' or 'very-high' for 'priority', found a list"),
        ("qos: utilty", "unknown qos 'utilty'; did you mean 'utility'?"),
        ("when: never", "unknown 'when' value 'never'; expected 'success', 'failure' or 'always'"),
        ("cwd: ''", "'cwd' is empty; expected a directory"),
        ("env: [A]", "expected a mapping of names to values for 'env', found a list"),
        ("env: {A: ~}", "'A' in 'env' has no value; write '\"\"' for an empty string"),
        ("inputs: {a: b}", "expected a list of paths or glob patterns for 'inputs', found a mapping"),
        ("exclusive: [[db]]", "expected a list of category names for 'exclusive', found a list in the list"),
        ("description: [x]", "expected a string for 'description', found a list"),
        ("queue: [a]", "expected a queue name for 'queue', found a list"),
        ("on_success: ''", "'on_success' is empty; expected a shell command"),
        ("service: true", "expected a mapping with 'ready' and 'timeout' for 'service', found a boolean 'true'"),
        ("foreach: {}", "missing 'from' in 'foreach' of task 'job'; give the file to read the items from"),
    ])
    func badValueIsReportedAtTheValue(line: String, message: String) throws {
        let loaded = loadTask("run: echo\n\(line)")
        #expect(loaded.messages == [message])
        let column = try #require(line.firstIndex(of: ":")).utf16Offset(in: line) + 7
        #expect(loaded.diagnostics.all.first?.location?.column ?? 0 >= column)
        #expect(loaded.pipeline == nil)
    }

    @Test func noActionIsReportedAtTheTaskID() {
        let loaded = loadTask("retries: 1")
        #expect(loaded.lines == [
            "pipeline.yaml:3:3: error: task 'job' has no action; give it one of 'run', 'parallel', 'download' or 'filter', or 'needs' to make it a group of tasks",
        ])
    }

    @Test func secondActionIsReportedAtItsKey() {
        let loaded = loadTask("parallel: [a, b]\nfilter: {input: a.jpg, output: b.png, effect: invert}")
        #expect(loaded.lines == [
            "pipeline.yaml:5:5: error: task 'job' has both 'parallel' and 'filter'; a task does exactly one thing",
        ])
    }

    @Test func unknownKeyWithoutNearMatchListsTheTaskKeys() {
        let loaded = loadTask("run: echo\nstage: build")
        #expect(loaded.messages.first?.hasPrefix("unknown key 'stage' in task 'job'; expected 'description', 'run',") == true)
    }

    @Test func nullLeavesAnOptionalKeyUnset() throws {
        let task = try #require(loadTask("run: echo\nneeds:\nqueue: ~\nretries:\nconditions:").task("job"))
        #expect(task.needs.isEmpty)
        #expect(task.queue == nil)
        #expect(task.retries == 0)
    }
}

/// `aliases`, `internal` and `platforms` (docs/pipeline.md, "Tasks").
@Suite struct TaskNamingAndPlatformDecodingTests {
    @Test func aliasesInternalAndPlatformsAreRead() throws {
        let loaded = load("""
            version: 1
            tasks:
              build: {run: make, aliases: [b, compile], platforms: [linux, darwin/arm64], conditions: [{env: CI}]}
              gen: {run: gen, internal: true}
            """)
        #expect(loaded.lines == [])
        let build = try #require(loaded.task("build"))
        #expect(build.aliases.map(\.value) == ["b", "compile"])
        #expect(build.aliases.first?.location.column == 32)
        // `platforms` comes first among the conditions, whatever the order of the keys.
        guard case .platform(let names)? = build.conditions.first, case .environmentSet("CI")? = build.conditions.last else {
            Issue.record("expected the platform check, then the env check: \(build.conditions)")
            return
        }
        #expect(names == ["linux", "darwin/arm64"])
        #expect(loaded.task("gen")?.isInternal == true)
        #expect(build.isInternal == false)
    }

    @Test func anUnknownPlatformIsAnErrorWithANearMatch() {
        let loaded = loadTask("run: make\nplatforms: [linux, macos, darwn, windows/arm64]")
        #expect(loaded.lines == [
            "pipeline.yaml:5:24: error: unknown platform 'macos'; use 'linux', 'darwin', 'windows', 'freebsd', 'amd64' or 'arm64', or 'os/arch' such as 'linux/arm64'",
            "pipeline.yaml:5:31: error: unknown platform 'darwn'; did you mean 'darwin'?",
        ])
    }

    @Test func anAliasThatIsAnotherIDOrAliasIsAnErrorAtItsPlace() {
        let loaded = load("""
            version: 1
            tasks:
              build: {run: make, aliases: [b]}
              test: {run: make test, aliases: [build, b, t]}
              lint: {run: lint, aliases: [t]}
            """)
        #expect(loaded.lines == [
            "pipeline.yaml:4:36: error: alias 'build' of task 'test' is already the id of task 'build' (line 3); choose another alias",
            "pipeline.yaml:4:43: error: alias 'b' of task 'test' is already an alias of task 'build' (line 3); choose another alias",
            "pipeline.yaml:5:31: error: alias 't' of task 'lint' is already an alias of task 'test' (line 4); choose another alias",
        ])
    }

    /// go-task's own Taskfile names its tasks `lint:fix` and `generate:mocks`.
    @Test func aDeclaredIDMayHoldColonsBetweenItsParts() {
        let loaded = load("version: 1\ntasks:\n  lint:fix: {run: make, aliases: [l:f]}\n  lint: {run: make, needs: [lint:fix]}\n  'a::b': {run: make}\n")
        #expect(loaded.messages == [
            "invalid task id 'a::b'; use letters, digits, '-', '_' and '.', with ':' between parts",
        ])
    }

    @Test func anInternalTaskCannotBeADefault() {
        let loaded = load("version: 1\ndefault: [gen]\ntasks:\n  gen: {run: gen, internal: true}\n")
        #expect(loaded.lines == [
            "pipeline.yaml:2:11: error: task 'gen' in 'default' is internal; it runs only when a task that runs needs it",
        ])
    }
}
