import JobGraphBasics
import JobGraphTestSupport
import PipelineModel
import Testing

@Suite struct PipelineDecodingTests {
    @Test func topLevelKeysAreDecoded() throws {
        let loaded = load("""
            version: 1
            name: photos
            vars:
              server: http://127.0.0.1:8765
              size: 320
            env:
              LANG: C.UTF-8
            queues:
              network:
                max_concurrent: 4
                qos: utility
              images:
            tasks:
              fetch: {run: "curl {{ server }}"}
            on_success: echo done
            on_failure: echo "failed at {{ server }}"
            """)
        #expect(loaded.lines == [])
        let pipeline = try #require(loaded.pipeline)
        #expect(pipeline.file == "pipeline.yaml")
        #expect(pipeline.version == 1)
        #expect(pipeline.name == "photos")
        #expect(pipeline.variables.map(\.name) == ["server", "size"])
        #expect(pipeline.variables.map(\.value) == ["http://127.0.0.1:8765", "320"])
        #expect(pipeline.variables.first?.location == SourceLocation(file: "pipeline.yaml", line: 4, column: 3))
        #expect(pipeline.environment.map(\.name) == ["LANG"])
        #expect(pipeline.environment.map(\.value.description) == ["C.UTF-8"])
        #expect(pipeline.queues.map(\.name.rawValue) == ["network", "images"])
        #expect(pipeline.queues.map(\.maxConcurrent) == [4, nil])
        #expect(pipeline.queues.map(\.qos) == [.utility, nil])
        #expect(pipeline.onSuccess?.description == "echo done")
        #expect(pipeline.onFailure?.placeholders == ["server@16:29"])
    }

    /// Contract: env values are strings by the YAML 1.2 core schema, so `NO`, `off` and `yes` stay as written.
    @Test func yaml12WordsStayStringsInVarsAndEnv() throws {
        let loaded = load("""
            version: 1
            vars:
              country: NO
              flag: off
              version: 1.10
              port: 08080
            env:
              COUNTRY: NO
              COLOR: off
              FAST: yes
              TRUTH: true
              RETRIES: 3
              EMPTY: ""
            tasks:
              a: {run: echo}
            """)
        let pipeline = try #require(loaded.pipeline)
        #expect(pipeline.variables.map(\.value) == ["NO", "off", "1.10", "08080"])
        #expect(pipeline.environment.map(\.value.description) == ["NO", "off", "yes", "true", "3", ""])
    }

    @Test func variableOverridesReplaceTheFilesValues() throws {
        let loaded = load(
            "version: 1\nvars:\n  server: http://a\n  mode: debug\ntasks:\n  a: {run: 'echo {{ server }}'}\n",
            variableOverrides: ["server": "http://b"])
        let pipeline = try #require(loaded.pipeline)
        #expect(pipeline.variables.map(\.name) == ["server", "mode"])
        #expect(pipeline.variables.map(\.value) == ["http://b", "debug"])
        #expect(pipeline.variables.map { $0.location?.line } == [3, 4])
    }

    /// A misspelt `--var` set nothing, silently, and as an exported variable made every task rerun.
    @Test func anUnknownOverrideIsAnErrorWithANearMatch() {
        let yaml = "version: 1\nvars:\n  server: http://a\n  mode: debug\ntasks:\n  a: {run: 'echo {{ server }}'}\n"
        #expect(load(yaml, variableOverrides: ["sever": "http://b"]).lines == [
            "error: unknown variable 'sever' given with '--var'; did you mean 'server'?",
        ])
        #expect(load(yaml, variableOverrides: ["PORT_NUMBER": "1"]).lines == [
            "error: unknown variable 'PORT_NUMBER' given with '--var'; declare it under 'vars', or use 'server' or 'mode'",
        ])
        #expect(load("version: 1\ntasks:\n  a: {run: echo}\n", variableOverrides: ["NOPE": "1"]).lines == [
            "error: unknown variable 'NOPE' given with '--var'; the file declares no 'vars'",
        ])
    }

    /// `vars: {JUST_LOG: "{{ log }}"}` printed `{{ log }}`: a variable may now use others, in any order.
    @Test func aVariableMayUseOtherVariablesInAnyOrder() throws {
        let yaml = """
            version: 1
            vars:
              JUST_LOG: "{{ log }}"
              log: "{{ level }}-x"
              level: warn
            tasks:
              a: {run: echo}
            """
        let pipeline = try #require(load(yaml).pipeline)
        #expect(pipeline.variables.map(\.value) == ["warn-x", "warn-x", "warn"])
        // A `--var` value is taken as given, and what uses it follows.
        let overridden = try #require(load(yaml, variableOverrides: ["level": "{{ debug }}"]).pipeline)
        #expect(overridden.variables.map(\.value) == ["{{ debug }}-x", "{{ debug }}-x", "{{ debug }}"])
    }

    @Test func aCycleOfVariablesIsAnErrorAtTheVariableThatClosesIt() {
        let loaded = load("""
            version: 1
            vars:
              a: "{{ b }}"
              b: "x{{ c }}"
              c: "{{ a }}"
            tasks:
              t: {run: echo}
            """)
        #expect(loaded.lines == ["pipeline.yaml:5:3: error: variable 'c' refers back to itself: a -> b -> c -> a"])
    }

    @Test func invalidOverrideNameHasNoLocation() {
        let loaded = load("version: 1\ntasks:\n  a: {run: echo}\n", variableOverrides: ["a b": "1"])
        #expect(loaded.lines == [
            "error: invalid variable name 'a b'; use letters, digits and '_', not starting with a digit (given with '--var')",
        ])
    }

    @Test func defaultsApplyWhereTaskDoesNotSetTheKey() throws {
        let loaded = load("""
            version: 1
            defaults:
              retries: 2
              timeout: 5m
              priority: high
              run: echo default
            tasks:
              plain: {}
              own: {retries: 0, priority: low, download: {url: "http://h/x", to: x}}
              unset: {run: make, timeout: ~}
            """)
        #expect(loaded.lines == [])
        let plain = try #require(loaded.task("plain"))
        #expect(plain.retries == 2)
        #expect(plain.timeout == 300)
        #expect(plain.priority == .high)
        #expect(plain.action.keyword == "run")
        let own = try #require(loaded.task("own"))
        #expect(own.retries == 0)
        #expect(own.priority == .low)
        #expect(own.timeout == 300)
        #expect(own.action.keyword == "download")
        let unset = try #require(loaded.task("unset"))
        #expect(unset.timeout == nil)
        #expect(unset.retries == 2)
    }

    @Test func defaultNeedsSkipTheTaskItself() throws {
        let loaded = load("""
            version: 1
            defaults:
              needs: [setup]
            tasks:
              setup: {run: ./setup.sh}
              build: {run: make}
              test: {run: make test, needs: [build]}
            """)
        #expect(loaded.lines == [])
        #expect(loaded.task("setup")?.needs.map(\.value) == [])
        #expect(loaded.task("build")?.needs.map(\.value) == ["setup"])
        #expect(loaded.task("test")?.needs.map(\.value) == ["build"])
    }

    @Test func mistakesInDefaultsAreReportedOnceAtTheirOwnLocation() {
        let loaded = load("""
            version: 1
            defaults:
              retries: many
              cwd: "{{ item }}"
              queue: missing
            tasks:
              a: {run: echo a}
              b: {run: echo b}
              c: {run: echo c}
            """)
        #expect(loaded.lines == [
            "pipeline.yaml:3:12: error: expected an integer for 'retries', found 'many'",
            "pipeline.yaml:4:9: error: 'item' is only defined in a task with 'foreach'",
            "pipeline.yaml:5:10: error: unknown queue 'missing'; declare it under 'queues'",
        ])
    }

    @Test func defaultTemplateUsingItemIsFineForForeachTasks() {
        let loaded = load("""
            version: 1
            defaults:
              cwd: "work/{{ item }}"
            tasks:
              a: {run: echo, foreach: [x, y]}
            """)
        #expect(loaded.lines == [])
        #expect(loaded.task("a")?.cwd?.placeholders == ["item@3:14"])
    }

    @Test func misspeltTasksKeyIsNotAlsoReportedMissing() {
        let loaded = load("version: 1\ntask:\n  a: {run: echo}\n")
        #expect(loaded.messages == ["unknown top-level key 'task'; did you mean 'tasks'?"])
    }

    @Test func unknownTopLevelKeyWithoutNearMatchListsTheKeys() {
        let loaded = load("version: 1\npipeline: []\ntasks:\n  a: {run: echo}\n")
        #expect(loaded.messages == [
            "unknown top-level key 'pipeline'; expected 'version', 'name', 'vars', 'env', 'queues', 'defaults', 'tasks', 'on_success', 'on_failure', 'output', 'executor', 'slurm', 'default', 'include', 'export', 'cache_dir', 'remote_cache' or 'resources'",
        ])
    }

    @Test(arguments: [
        ("version: '1'", nil),
        ("version: 1.0", "unsupported version '1.0'; the only version is 1"),
        ("version: [1]", "expected 'version: 1', found a list"),
        ("version:", "expected 'version: 1', found nothing"),
    ] as [(String, String?)])
    func versionMustBeOne(line: String, message: String?) {
        let loaded = load("\(line)\ntasks:\n  a: {run: echo}\n")
        #expect(loaded.messages == (message.map { [$0] } ?? []))
    }

    @Test func variableNamedItemIsRefused() {
        let loaded = load("version: 1\nvars:\n  item: x\ntasks:\n  a: {run: echo}\n")
        #expect(loaded.lines == ["pipeline.yaml:3:3: error: 'item' is reserved for 'foreach' items; choose another variable name"])
    }

    @Test func emptyTaskGetsDefaultsOrIsReportedAsHavingNoAction() {
        let withDefault = load("version: 1\ndefaults: {run: make}\ntasks:\n  a:\n")
        #expect(withDefault.lines == [])
        let without = load("version: 1\ntasks:\n  a:\n")
        #expect(without.messages == ["task 'a' has no action; give it one of 'run', 'parallel', 'download' or 'filter', or 'needs' to make it a group of tasks"])
    }

    @Test func envNamesMayNotContainEquals() {
        let loaded = load("version: 1\nenv:\n  A=B: x\ntasks:\n  a: {run: echo}\n")
        #expect(loaded.lines == ["pipeline.yaml:3:3: error: invalid environment variable name 'A=B' in 'env'; it may not be empty or contain '='"])
    }
}
