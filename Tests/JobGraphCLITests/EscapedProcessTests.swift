import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Processes that leave their task's process group, which a group kill cannot reach: `jobgraph` inherits
/// them as a subreaper, reaps those that exit, and stops the rest when the run ends, however it ends
/// (contract: "Exit codes and signals"). Each escapee writes its pid to a file once it has escaped, and each
/// task that starts one waits for that file, so the escape has happened before the task ends.
@Suite(.hangLimit(minutes: 2))
struct EscapedProcessTests {
    /// Starts an escapee, in the way `argv[1]` names, that writes its pid to `argv[2]` and then sleeps;
    /// the caller returns once that file exists.
    private static let escape = """
        import ctypes, os, sys, time
        mode, pid_file = sys.argv[1], sys.argv[2]

        def escaped():
            # Away from the task's output pipe, as daemons are; then tell the test who we are.
            null = os.open(os.devnull, os.O_RDWR)
            for descriptor in (0, 1, 2):
                os.dup2(null, descriptor)
            with open(pid_file + ".tmp", "w") as file:
                file.write(str(os.getpid()))
            os.rename(pid_file + ".tmp", pid_file)
            os.execvp("sleep", ["sleep", "313"])

        if mode == "double-fork":
            # A new process group in the same session, then a second fork: the grandchild is an orphan
            # in a group no task leads.
            if os.fork() == 0:
                os.setpgid(0, 0)
                if os.fork() == 0:
                    escaped()
                os._exit(0)
        elif mode == "daemon":
            if os.fork() == 0:
                if ctypes.CDLL(None, use_errno=True).daemon(1, 1) != 0:
                    os._exit(1)
                escaped()
        while not os.path.exists(pid_file):
            time.sleep(0.01)
        """

    /// Three tasks, each leaving one escapee behind, and `last`, which needs them and runs `lastCommand`.
    private static func pipeline(last lastCommand: String) -> String {
        """
        version: 1
        tasks:
          setsid: {run: "setsid sh -c 'echo $$ > setsid.tmp; mv setsid.tmp setsid.pid; exec sleep 313' </dev/null >/dev/null 2>&1 & until [ -e setsid.pid ]; do sleep 0.01; done"}
          double: {run: "python3 escape.py double-fork double.pid"}
          daemon: {run: "python3 escape.py daemon daemon.pid"}
          last: {needs: [setsid, double, daemon], run: "\(lastCommand)"}
        """
    }

    private static let escapees = ["setsid", "double", "daemon"]

    private static func folder(last lastCommand: String) throws -> PipelineFolder {
        let folder = try PipelineFolder(pipeline(last: lastCommand), prefix: "jobgraph-escape")
        try folder.write(escape, to: "escape.py")
        return folder
    }

    /// The pid each escapee wrote.
    private static func escapeePIDs(in folder: PipelineFolder) throws -> [String: pid_t] {
        var pids: [String: pid_t] = [:]
        for task in escapees {
            let text = try #require(folder.directory.read("\(task).pid"), "the \(task) escapee never started")
            guard let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                Issue.record("the \(task) escapee wrote '\(text)'")
                continue
            }
            pids[task] = pid
        }
        return pids
    }

    /// Checks, the moment `jobgraph` has exited, that no escapee is left (not even a zombie: `jobgraph`
    /// reaped them), and that the summary named each; kills any survivor so the machine stays clean.
    private static func expectEscapeesGone(_ folder: PipelineFolder, summary lines: [String]) throws {
        for (task, pid) in try escapeePIDs(in: folder) {
            let alive = kill(pid, 0) == 0
            #expect(!alive && errno == ESRCH, "the \(task) escapee \(pid) outlived jobgraph")
            #expect(!FileManager.default.fileExists(atPath: "/proc/\(pid)"))
            if alive { kill(pid, SIGKILL) }
            #expect(lines.contains("1 process left behind by task `\(task)` was stopped"), "\(lines)")
        }
    }

    @Test func escapeesAreStoppedWhenTheRunEndsNormally() async throws {
        let folder = try Self.folder(last: "true")
        defer { folder.remove() }
        let run = try await folder.run()
        #expect(run.status == 0, "\(run.outcome.standardError)")
        #expect(run.finalStates == ["setsid": "succeeded", "double": "succeeded", "daemon": "succeeded", "last": "succeeded"])
        try Self.expectEscapeesGone(folder, summary: run.outcome.outputLines)
    }

    @Test func escapeesAreStoppedWhenATaskFails() async throws {
        let folder = try Self.folder(last: "exit 3")
        defer { folder.remove() }
        let run = try await folder.run()
        #expect(run.status == 1)
        #expect(run.finalStates["last"] == "failed")
        try Self.expectEscapeesGone(folder, summary: run.outcome.outputLines)
    }

    @Test(arguments: [(SIGINT, Int32(130)), (SIGTERM, Int32(143))])
    func escapeesAreStoppedWhenASignalStopsTheRun(signal: Int32, status: Int32) async throws {
        let folder = try Self.folder(last: "sleep 300")
        defer { folder.remove() }
        let running = try JobGraphBinary.start(["run", "p.yaml", "--progress", "plain", "--events", "events.jsonl"],
                                               in: folder.directory)
        // `last` executes only once every escapee has written its pid.
        #expect(await running.waitForTransitions(to: "executing", count: 4, in: "events.jsonl"))
        running.send(signal)
        let outcome = try await running.finish()
        #expect(outcome.status == status)
        try Self.expectEscapeesGone(folder, summary: outcome.outputLines)
    }

    /// An escapee that exits during the run is reaped by `jobgraph` at once: it was reparented to `jobgraph`
    /// (not init), and no zombie is left for the rest of the run.
    @Test func anEscapeeThatExitsDuringTheRunIsReapedByJobgraph() async throws {
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              leave: {run: "python3 orphan.py"}
              check: {needs: [leave], run: "sh check.sh"}
            """, prefix: "jobgraph-escape")
        defer { folder.remove() }
        // The orphan waits until its parent (the task) has ended, notes who adopted it, and exits.
        try folder.write("""
            import os, time
            if os.fork() == 0:
                os.setsid()
                parent = os.getppid()
                open("escaped", "w").close()
                while os.getppid() == parent:
                    time.sleep(0.01)
                with open("orphan.tmp", "w") as file:
                    file.write(f"{os.getpid()} {os.getppid()}")
                os.rename("orphan.tmp", "orphan")
                os._exit(0)
            while not os.path.exists("escaped"):
                time.sleep(0.01)
            """, to: "orphan.py")
        // `check` runs as jobgraph's child, so its $PPID is jobgraph. A bounded wait (20 s) for the zombie
        // to go: jobgraph reaps within a fraction of a second.
        try folder.write("""
            for i in $(seq 2000); do [ -e orphan ] && break; sleep 0.01; done
            read pid adopter < orphan
            [ "$adopter" = "$PPID" ] || { echo "adopted by $adopter, not jobgraph ($PPID)"; exit 1; }
            for i in $(seq 2000); do [ -e /proc/$pid ] || exit 0; sleep 0.01; done
            echo "orphan $pid was not reaped: $(cat /proc/$pid/stat)"; exit 1
            """, to: "check.sh")
        let run = try await folder.run()
        #expect(run.status == 0, "\(run.outcome.standardOutput)")
        #expect(run.finalStates["check"] == "succeeded")
        // It exited on its own before the run ended: nothing had to be stopped.
        #expect(!run.outcome.standardOutput.contains("left behind"))
    }
}
