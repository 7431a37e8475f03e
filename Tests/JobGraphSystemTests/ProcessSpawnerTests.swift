import Foundation
import Glibc
import JobGraphSystem
import JobGraphTestSupport
import Testing

@Suite(.hangLimit(minutes: 1)) struct ProcessSpawnerTests {
    @Test func echoPrintsItsLineThenExitsZero() async throws {
        try await withEventLoop { loop in
            let result = try await run("echo hi", on: loop)
            #expect(result.lines == ["hi"])
            #expect(result.end == .exited(.exited(code: 0)))
        }
    }

    @Test func exitCodeIsReported() async throws {
        try await withEventLoop { loop in
            let result = try await run("sh -c 'exit 3'", on: loop)
            #expect(result.lines.isEmpty)
            #expect(result.end == .exited(.exited(code: 3)))
        }
    }

    @Test func deathBySignalIsReportedAsSuch() async throws {
        try await withEventLoop { loop in
            let result = try await run("kill -TERM $$", on: loop)
            #expect(result.end == .exited(.signalled(signal: SIGTERM, coreDumped: false)))
            guard case .exited(let status)? = result.end else { return }
            #expect(status.signal == .terminate)
            #expect(status.shellStatus == 143)
            #expect(status.description == "killed by SIGTERM")
        }
    }

    @Test func standardOutputAndErrorShareOnePipe() async throws {
        try await withEventLoop { loop in
            let result = try await run("echo out; echo err >&2; echo out again", on: loop)
            #expect(result.lines == ["out", "err", "out again"])
        }
    }

    @Test func aLastLineWithoutNewlineIsDelivered() async throws {
        try await withEventLoop { loop in
            let result = try await run("printf 'one\\ntwo'", on: loop)
            #expect(result.lines == ["one", "two"])
            #expect(result.end == .exited(.exited(code: 0)))
        }
    }

    @Test func concurrentChildrenNeverTearALine() async throws {
        let lineLength = 1_000
        // Each child prints 2,000 numbered lines of 1,000 letters: ~2 MB, far more than a pipe or one read
        // holds, so lines straddle reads.
        func command(_ letter: Character) -> String {
            "line=$(printf '%0\(lineLength)d' 0 | tr 0 \(letter)); i=0; "
                + "while [ $i -lt 2000 ]; do echo \"$i $line\"; i=$((i+1)); done"
        }
        try await withEventLoop { loop in
            async let first = run(command("A"), on: loop)
            async let second = run(command("B"), on: loop)
            for (letter, result) in [("A", try await first), ("B", try await second)] {
                #expect(result.end == .exited(.exited(code: 0)))
                #expect(result.lines.count == 2_000)
                let body = String(repeating: letter, count: lineLength)
                let torn = result.lines.enumerated().filter { $0.element != "\($0.offset) \(body)" }
                #expect(torn.isEmpty, "first torn line: \(torn.first.map { String($0.element.prefix(40)) } ?? "")")
            }
        }
    }

    @Test func childSeesItsWorkingDirectoryAndEnvironment() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let realDirectory = URL(fileURLWithPath: directory.path).resolvingSymlinksInPath().path
        try await withEventLoop { loop in
            let environment = testEnvironment + ["GREETING=hello there"]
            let direct = try await run("/bin/pwd", on: loop, environment: environment, workingDirectory: directory.path)
            #expect(direct.lines == [realDirectory])
            try directory.write("in the right place\n", to: "marker")
            let shell = try await run(
                "echo \"$GREETING\"; cat marker", on: loop, environment: environment, workingDirectory: directory.path)
            #expect(shell.lines == ["hello there", "in the right place"])
            let printenv = try await run("printenv GREETING", on: loop, environment: environment)
            #expect(printenv.lines == ["hello there"])
        }
    }

    @Test func aSharedEnvironmentComesFirstAndItsPathFindsPrograms() async throws {
        // The block's PATH is the only one: `printenv` is found through it, and the child sees the block's
        // entries, then its own, and nothing else.
        let shared = try #require(EnvironmentBlock(["PATH": "/usr/bin:/bin", "GREETING": "hello", "SKIPPED": "x"],
                                                   excluding: "SKIPPED"))
        #expect(shared.count == 2)
        #expect(shared.searchPath == "/usr/bin:/bin")
        try await withEventLoop { loop in
            let direct = try await run("printenv", on: loop, environment: ["OWN=1"], sharedEnvironment: shared)
            #expect(direct.end == .exited(.exited(code: 0)))
            #expect(Set(direct.lines.dropLast()) == ["PATH=/usr/bin:/bin", "GREETING=hello"])
            #expect(direct.lines.last == "OWN=1")
            // The same block serves any number of children.
            let shell = try await run("echo \"$GREETING $OWN\"", on: loop, environment: ["OWN=2"], sharedEnvironment: shared)
            #expect(shell.lines == ["hello 2"])
        }
        #expect(EnvironmentBlock(["BAD": "a\u{0}b"]) == nil)
    }

    @Test func oneSpawnerGivesEachChildItsOwnFolderAndPipeWhateverItReuses() async throws {
        // The spawner keeps the file actions it built, by pipe descriptor and folder: children started
        // together (different pipes) and one after another (the same pipe numbers again) in two folders
        // must each print from their own folder to their own pipe, and read nothing from standard input.
        let first = try TemporaryDirectory(), second = try TemporaryDirectory()
        defer { first.remove(); second.remove() }
        let folders = [first, second].map { URL(fileURLWithPath: $0.path).resolvingSymlinksInPath().path }
        let spawner = ProcessSpawner()
        try await withEventLoop { loop in
            for round in 0..<3 {
                var recorders: [(folder: String, recorder: ChildRecorder)] = []
                for (index, folder) in (round == 1 ? folders.reversed() : folders).enumerated() {
                    let child = try spawner.spawn(command: "sh -c 'pwd; cat; echo $0 >&2' \(index)", environment: testEnvironment,
                                                  workingDirectory: folder)
                    let recorder = ChildRecorder()
                    loop.watch(child, token: ChildToken(rawValue: UInt64(round * 2 + index)), handler: recorder)
                    recorders.append((folder, recorder))
                }
                for (index, (folder, recorder)) in recorders.enumerated() {
                    let result = await recorder.collect()
                    #expect(result.lines == [folder, "\(index)"], "round \(round)")
                    #expect(result.end == .exited(.exited(code: 0)))
                }
            }
        }
    }

    @Test func childRunsWithTheRequestedNiceness() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let gate = directory.path + "/gate"
        #expect(mkfifo(gate, 0o600) == 0)
        try await withEventLoop { loop in
            // The child reads its niceness only after the gate opens, i.e. after `spawn` has returned, so the
            // test does not depend on who wins the microseconds between exec and `setpriority`.
            let child = try ProcessSpawner().spawn(
                command: "read go < gate; nice", environment: testEnvironment, workingDirectory: directory.path,
                niceness: 10)
            let recorder = ChildRecorder()
            loop.watch(child, token: ChildToken(rawValue: 7), handler: recorder)
            let writer = open(gate, O_WRONLY | O_CLOEXEC)   // blocks until the child opens its end
            #expect(writer >= 0)
            _ = write(writer, "go\n", 3)
            close(writer)
            let result = await recorder.collect()
            #expect(result.lines == ["10"])
            #expect(result.end == .exited(.exited(code: 0)))
        }
    }

    @Test func childInheritsNoOtherDescriptors() async throws {
        // A descriptor without close-on-exec, as careless code elsewhere in the process might open.
        let leaky = open("/dev/null", O_RDONLY)
        defer { close(leaky) }
        try await withEventLoop { loop in
            // `ls` itself holds 3, the directory it lists.
            let result = try await run("ls /proc/self/fd", on: loop)
            #expect(result.lines == ["0", "1", "2", "3"])
        }
    }

    /// Whatever this process ignores, handles or blocks, a child starts as a fresh program would: every
    /// signal at its default action (an ignored one would survive the exec) and none blocked.
    @Test func childStartsWithEverySignalAtItsDefaultActionAndNoneBlocked() async throws {
        // SIGURG's default is to ignore it, so ignoring it here changes nothing else in the test process; the
        // real-time signal gets a handler that nothing sends it.
        let realTimeSignal: CInt = 41   // SIGRTMIN + 7 under glibc
        let previousUrgent = signal(SIGURG, SIG_IGN)
        let previousRealTime = signal(realTimeSignal) { _ in }
        defer {
            signal(SIGURG, previousUrgent)
            signal(realTimeSignal, previousRealTime)
        }
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGUSR2)
        var previousMask = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previousMask)
        defer { pthread_sigmask(SIG_SETMASK, &previousMask, nil) }

        try await withEventLoop { loop in
            // `cat` is exec'd directly (no shell syntax) and installs no handler: it shows what it started with.
            let result = try await run("cat /proc/self/status", on: loop)
            let fields = Dictionary(result.lines.compactMap { line -> (String, String)? in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }, uniquingKeysWith: { first, _ in first })
            #expect(fields["SigIgn"] == "0000000000000000")
            #expect(fields["SigCgt"] == "0000000000000000")
            #expect(fields["SigBlk"] == "0000000000000000")
        }
    }

    @Test func childLeadsAProcessGroupOfItsOwn() async throws {
        try await withEventLoop { loop in
            let result = try await run("cat /proc/self/stat", on: loop)
            // "pid (comm) state ppid pgrp …"; cat's name holds no space or parenthesis.
            let fields = try #require(result.lines.first).split(separator: " ")
            #expect(fields.count > 4)
            #expect(fields[4] == fields[0])
            #expect(fields[4] != "\(getpgrp())")
        }
    }

    @Test func missingExecutableIsATypedError() throws {
        let configuration = SpawnConfiguration(
            executablePath: "/nonexistent/jobgraph-tool", arguments: ["jobgraph-tool"], environment: testEnvironment)
        #expect(throws: SystemError("posix_spawn", errno: .noSuchFileOrDirectory, subject: "/nonexistent/jobgraph-tool")) {
            _ = try ProcessSpawner().spawn(configuration)
        }
        let error = SystemError("posix_spawn", errno: .noSuchFileOrDirectory, subject: "/nonexistent/jobgraph-tool")
        #expect(error.description == "posix_spawn '/nonexistent/jobgraph-tool': No such file or directory")
    }

    @Test func argumentWithNulByteIsRejected() {
        let configuration = SpawnConfiguration(
            executablePath: "/bin/echo", arguments: ["echo", "a\u{0}b"], environment: testEnvironment)
        #expect(throws: SystemError("posix_spawn", errno: .invalidArgument, subject: "/bin/echo")) {
            _ = try ProcessSpawner().spawn(configuration)
        }
    }

    @Test(arguments: ["jobgraph-no-such-program --flag", "./jobgraph-no-such-script"])
    func missingProgramGetsTheShellsMessageAndStatus(command: String) async throws {
        try await withEventLoop { loop in
            let result = try await run(command, on: loop)
            #expect(result.end == .exited(.exited(code: 127)))
            #expect(result.lines.count == 1)
            #expect(result.lines.first?.contains("not found") == true)
        }
    }

    @Test func scriptWithoutInterpreterLineRunsThroughTheShell() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("echo from script\n", to: "plain", executable: true)
        try await withEventLoop { loop in
            let result = try await run("./plain", on: loop, workingDirectory: directory.path)
            #expect(result.lines == ["from script"])
            #expect(result.end == .exited(.exited(code: 0)))
        }
    }

    /// A script still held open for writing (as a child forked elsewhere in this process, between its fork
    /// and its exec, would hold it) cannot be exec'd (`ETXTBSY`). The spawner never waits that out: it says
    /// so at once for its caller to try again later (`ShellStep`, from a timer), or on the last try lets the
    /// shell say it.
    @Test func aBusyScriptIsReportedAtOnceOrLeftToTheShell() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("#!/bin/sh\necho ran\n", to: "busy", executable: true)
        let writer = open(directory.path + "/busy", O_WRONLY | O_CLOEXEC)
        #expect(writer >= 0)
        defer { close(writer) }
        #expect(throws: SystemError("posix_spawn", errno: .textFileBusy, subject: directory.path + "/busy")) {
            try ProcessSpawner().spawn(command: directory.path + "/busy", environment: testEnvironment, whenBusy: .report)
        }
        try await withEventLoop { loop in
            let result = try await run(directory.path + "/busy", on: loop)
            #expect(result.lines.count == 1 && result.lines[0].contains("Text file busy"), "\(result.lines)")
            #expect(result.end == .exited(.exited(code: 126)))
        }
    }
}
