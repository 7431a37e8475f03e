import Execution
import Foundation
import JobGraphTestSupport
import PipelineModel
import Testing

/// Dynamic `foreach: {from: FILE}` with real processes (contract: "foreach"; Advanced NSOperations'
/// operations that produce operations): the list is read once the task's needs are done, its items join
/// the running queues as `photo[0]`, `photo[1]` …, and tasks that need the fan-out wait for all of them.
@Suite(.hangLimit(minutes: 1))
struct FanOutRunTests {
    private static func isItem(of group: String) -> (TaskID) -> Bool {
        { $0.rawValue.hasPrefix(group + "[") }
    }

    @Test func itemsFromAFileAnEarlierTaskWroteRunOnTheirQueueWithItsLimitAndDependentsWaitForAll() async throws {
        // Each item waits until two have started: the queue's limit must be reached, or the run times out
        // (a hang guard, not a wait).
        let run = try await RealRun.run("""
            version: 1
            queues:
              pool: {max_concurrent: 2}
            tasks:
              list:
                run: mkdir -p build started && printf '["a", "b", "c", "d", "e", "f"]' > build/items.json
              work:
                needs: [list]
                foreach: {from: build/items.json}
                queue: pool
                timeout: 300s
                run: mktemp started/x.XXXXXX > /dev/null; until [ $(ls started | wc -l) -ge 2 ]; do sleep 0.01; done; echo {{ item }} | tee build/{{ item }}.out
              album:
                needs: [work]
                run: cat build/a.out build/f.out
            """, jobs: 4)
        let items: [TaskID] = (0..<6).map { TaskID("work[\($0)]") }
        #expect(items.allSatisfy { run.finalStates[$0] == .succeeded }, "\(run.finalStates)")
        #expect(items.map { run.output(of: $0) } == ["a", "b", "c", "d", "e", "f"].map { [$0] })
        #expect(run.maximumExecuting(among: Self.isItem(of: "work")) == 2)
        #expect(run.observer.transitions.filter { Self.isItem(of: "work")($0.task) }.allSatisfy { $0.queue == "pool" })
        // The list is read after `list` ended; `album` starts after every item and the fan-out ended.
        let listed = try #require(run.terminalIndex(of: "list"))
        let firstItem = try #require(run.observer.transitions.firstIndex { Self.isItem(of: "work")($0.task) })
        #expect(listed < firstItem)
        let albumStarts = try #require(run.index(of: "album", from: .ready, to: .executing))
        for item in items + ["work"] {
            #expect(try #require(run.terminalIndex(of: item)) < albumStarts, "album started before \(item) ended")
        }
        #expect(run.moves(of: "work") == ["pending -> ready", "ready -> executing", "executing -> succeeded"])
        #expect(run.output(of: "album") == ["a", "f"])
        #expect(run.summary?.counts[.succeeded] == 9)
        #expect(run.summary?.criticalPath == ["list", "work", "album"])
        #expect(run.brokenLifecycles.isEmpty, "\(run.brokenLifecycles)")
    }

    @Test func objectItemsFillTheirFieldsAndTextListsGiveOneItemPerLine() async throws {
        let run = try await RealRun.run("""
            version: 1
            tasks:
              photo:
                foreach: {from: photos.json}
                run: echo {{ item.name }} is {{ item.size }} wide
              word:
                foreach: {from: words.txt}
                run: echo item={{ item }}
            """, jobs: 2, prepare: { directory in
            try directory.write(#"[{"name": "alpha", "size": 3}, {"name": "beta's", "size": 5.5, "raw": true}]"#, to: "photos.json")
            try directory.write("first\n\n  second one  \nthird", to: "words.txt")
        })
        #expect(run.output(of: "photo[0]") == ["alpha is 3 wide"])
        // A substituted value reaches the shell quoted (contract: "Templating").
        #expect(run.output(of: "photo[1]") == ["beta's is 5.5 wide"])
        #expect(run.output(of: "word[0]") == ["item=first"])
        #expect(run.output(of: "word[1]") == ["item=second one"])
        #expect(run.output(of: "word[2]") == ["item=third"])
        #expect(run.finalStates.count == 7)
        #expect(run.finalStates.values.allSatisfy { $0 == .succeeded })
    }

    /// An item whose value would send a path outside the pipeline's folder fails alone, with a clear error;
    /// with `--keep-going` or `allow_failure`, its siblings run and succeed.
    @Test(arguments: [(keepGoing: true, allowFailure: false), (keepGoing: false, allowFailure: true)])
    func aPathEscapingItemFailsAlone(keepGoing: Bool, allowFailure: Bool) async throws {
        let run = try await RealRun.run("""
            version: 1
            defaults:
              allow_failure: \(allowFailure)
            tasks:
              by-cwd:
                foreach: {from: items.json}
                cwd: "build/{{ item.name }}"
                run: touch here
              by-outputs:
                foreach: {from: items.json}
                outputs: ["build/{{ item.name }}.out"]
                run: touch build/{{ item.name }}.out
            """, jobs: 2, keepGoing: keepGoing, prepare: { directory in
            try directory.write(#"[{"name": "one"}, {"name": "../x"}, {"name": "two"}]"#, to: "items.json")
            for name in ["one", "two"] {
                try FileManager.default.createDirectory(atPath: directory.file("build/\(name)"), withIntermediateDirectories: true)
            }
        })
        for group in ["by-cwd", "by-outputs"] {
            #expect(run.finalStates[TaskID("\(group)[0]")] == .succeeded)
            #expect(run.finalStates[TaskID("\(group)[2]")] == .succeeded)
            let escaping = try #require(run.transition(of: TaskID("\(group)[1]"), to: .failed))
            let key = group == "by-cwd" ? "cwd" : "outputs"
            let template = group == "by-cwd" ? "build/{{ item.name }}" : "build/{{ item.name }}.out"
            let rendered = template.replacingOccurrences(of: "{{ item.name }}", with: "../x")
            #expect(escaping.error == "\(key) '\(rendered)' (from '\(template)'): the value '../x' of {{ item.name }} "
                + "may not be an absolute path or contain '..'")
        }
        #expect(run.directory.exists("build/one/here") && run.directory.exists("build/two/here"))
        #expect(run.directory.exists("build/one.out") && run.directory.exists("build/two.out"))
        #expect(!run.directory.exists("x.out") && !run.directory.exists("here"))
        #expect(run.summary?.hasFailures == !allowFailure)
        #expect(run.brokenLifecycles.isEmpty, "\(run.brokenLifecycles)")
    }

    @Test func aDownloadDestinationFromAnItemMayNotLeaveTheFolder() async throws {
        let run = try await RealRun.run("""
            version: 1
            tasks:
              fetch:
                foreach: {from: items.json}
                download: {url: "http://127.0.0.1:9/{{ item.name }}", to: "build/{{ item.name }}.bin"}
            """, jobs: 1, prepare: { directory in
            try directory.write(#"[{"name": "../../etc/evil"}]"#, to: "items.json")
        })
        let failed = try #require(run.transition(of: "fetch[0]", to: .failed))
        #expect(failed.error == "to 'build/../../etc/evil.bin' (from 'build/{{ item.name }}.bin'): the value '../../etc/evil' "
            + "of {{ item.name }} may not be an absolute path or contain '..'")
    }

    @Test func aMalformedListFailsTheTaskNamingTheFileAndLine() async throws {
        let run = try await RealRun.run("""
            version: 1
            tasks:
              photo:
                foreach: {from: build/photos.json}
                run: echo {{ item.name }}
              album: {needs: [photo], run: "touch album.ran"}
              missing:
                foreach: {from: build/nowhere.json}
                run: echo {{ item }}
            """, jobs: 1, keepGoing: true, prepare: { directory in
            try FileManager.default.createDirectory(atPath: directory.file("build"), withIntermediateDirectories: true)
            try directory.write("[\n  {\"name\": \"a\"},\n  {\"name\": }\n]\n", to: "build/photos.json")
        })
        #expect(run.finalStates == ["photo": .failed, "album": .skipped, "missing": .failed])
        let photo = try #require(run.transition(of: "photo", to: .failed))
        #expect(photo.error == "'build/photos.json', line 3: not valid JSON (invalid value around character 30)")
        let missing = try #require(run.transition(of: "missing", to: .failed))
        #expect(missing.error == "cannot read the fan-out list 'build/nowhere.json'")
        #expect(run.summary?.failures.map(\.id) == ["photo", "missing"])
        #expect(run.brokenLifecycles.isEmpty, "\(run.brokenLifecycles)")
    }

    @Test func anEmptyListEndsTheFanOutAndItsDependentsGoOn() async throws {
        let run = try await RealRun.run("""
            version: 1
            tasks:
              photo: {foreach: {from: empty.json}, run: "echo {{ item }}"}
              album: {needs: [photo], run: "echo done"}
            """, jobs: 1, prepare: { try $0.write("[]", to: "empty.json") })
        #expect(run.finalStates == ["photo": .succeeded, "album": .succeeded])
    }

    @Test func aFanOutWithConditionsReadsItsListOnceTheyHold() async throws {
        let run = try await RealRun.run("""
            version: 1
            tasks:
              photo:
                conditions: [{file_exists: list.txt}, {command: "echo checked"}]
                foreach: {from: list.txt}
                run: echo {{ item }}
              skipped:
                conditions: [{file_exists: nowhere.txt}]
                foreach: {from: nowhere.txt}
                run: echo {{ item }}
            """, jobs: 2, prepare: { try $0.write("a\nb\n", to: "list.txt") })
        #expect(run.finalStates == ["photo": .succeeded, "photo[0]": .succeeded, "photo[1]": .succeeded, "skipped": .skipped])
        #expect(run.output(of: "photo") == ["checked"])
        #expect(run.output(of: "photo[0]") == ["a"])
        #expect(run.moves(of: "photo[1]") == ["pending -> ready", "ready -> executing", "executing -> succeeded"])
    }

    @Test func conditionsNamingTheItemAreCheckedOnEachItem() async throws {
        let run = try await RealRun.run("""
            version: 1
            tasks:
              photo:
                foreach: {from: list.txt}
                conditions: [{file_exists: "{{ item }}.in"}]
                run: cat {{ item }}.in
            """, jobs: 2, prepare: { directory in
                try directory.write("a\nb\nc\n", to: "list.txt")
                try directory.write("A\n", to: "a.in")
                try directory.write("C\n", to: "c.in")
            })
        #expect(run.finalStates == ["photo": .succeeded, "photo[0]": .succeeded, "photo[1]": .skipped, "photo[2]": .succeeded])
        #expect(run.output(of: "photo[0]") == ["A"])
        #expect(run.moves(of: "photo[1]") == ["pending -> waiting", "waiting -> skipped"])
    }

    /// The fan-out checks its item-free conditions once, before reading its list; its items check only
    /// those that name the item, so a command condition does not run again for every item.
    @Test func itemsCheckOnlyTheConditionsNamingTheItem() async throws {
        let run = try await RealRun.run("""
            version: 1
            tasks:
              photo:
                foreach: {from: list.txt}
                conditions: [{command: "echo checked"}, {file_exists: "{{ item }}.in"}]
                run: cat {{ item }}.in
            """, jobs: 2, prepare: { directory in
                try directory.write("a\nb\n", to: "list.txt")
                try directory.write("A\n", to: "a.in")
            })
        #expect(run.finalStates == ["photo": .succeeded, "photo[0]": .succeeded, "photo[1]": .skipped])
        #expect(run.output(of: "photo") == ["checked"])
        #expect(run.output(of: "photo[0]") == ["A"])
        #expect(run.output(of: "photo[1]") == [])
    }
}
