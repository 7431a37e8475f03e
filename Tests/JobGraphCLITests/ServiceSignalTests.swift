import Foundation
import JobGraphTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A service under Ctrl-C (contract: "service", "Exit codes and signals"): SIGINT to `jobgraph` stops the
/// service's process group with everything else, and no process outlives `jobgraph`.
@Suite(.hangLimit(minutes: 1))
struct ServiceSignalTests {
    @Test func sigintStopsAReadyServiceAndTheTaskUsingIt() async throws {
        let directory = try ScratchDirectory("jobgraph-service")
        defer { directory.remove() }
        let port = try LoopbackSocket.freePort()
        try directory.write("""
            version: 1
            tasks:
              server:
                run: exec python3 -m http.server \(port) --bind 127.0.0.1
                service: {ready: {reachable: "127.0.0.1:\(port)"}, timeout: 300s}
              client:
                needs: [server]
                run: curl -sSf -o /dev/null http://127.0.0.1:\(port)/ && echo reached && exec sleep 300.741
              after: {needs: [client], run: "touch after.ran"}
            """, to: "p.yaml")
        let running = try JobGraphBinary.start(["run", "p.yaml", "--events", "events.jsonl"], in: directory)
        #expect(await running.waitForOutput(containing: "client | reached"))
        #expect(await eventually { !ProcessTable.living(withArgument: "300.741").isEmpty })
        // The server's own processes, by pid: once it is gone, another test may start a server on the same
        // port, whose arguments would match.
        let servers = ProcessTable.living(withArgument: "\(port)")
        #expect(!servers.isEmpty)
        running.send(SIGINT)
        let outcome = try await running.finish()
        #expect(outcome.status == 130)
        #expect(outcome.outputLines.last == "interrupted by SIGINT")
        let finalStates = Dictionary(running.events(in: "events.jsonl").compactMap { event -> (String, String)? in
            guard let task = event["task"] as? String, let state = event["to"] as? String else { return nil }
            return (task, state)
        }, uniquingKeysWith: { $1 })
        #expect(finalStates == ["server": "cancelled", "client": "cancelled", "after": "cancelled"])
        #expect(!directory.exists("after.ran"))
        // jobgraph has exited: a server process or the marker still living would have outlived it.
        let living = Set(ProcessTable.living(withArgument: "\(port)"))
        #expect(living.isDisjoint(with: servers), "the service outlived jobgraph: \(living.intersection(servers))")
        #expect(ProcessTable.living(withArgument: "300.741").isEmpty)
    }

    @Test func sigintStopsAServiceThatIsNotReadyYet() async throws {
        let directory = try ScratchDirectory("jobgraph-service")
        defer { directory.remove() }
        let socket = try LoopbackSocket()  // bound, never listening: the service never becomes ready
        try directory.write("""
            version: 1
            tasks:
              server:
                run: exec sleep 300.742
                service: {ready: {reachable: "127.0.0.1:\(socket.port)"}, timeout: 300s}
              client: {needs: [server], run: "touch client.ran"}
            """, to: "p.yaml")
        let running = try JobGraphBinary.start(["run", "p.yaml", "--events", "events.jsonl"], in: directory)
        #expect(await running.waitForTransitions(to: "executing", in: "events.jsonl"))
        #expect(await eventually { !ProcessTable.living(withArgument: "300.742").isEmpty })
        running.send(SIGINT)
        let outcome = try await running.finish()
        #expect(outcome.status == 130)
        #expect(!directory.exists("client.ran"))
        #expect(ProcessTable.living(withArgument: "300.742").isEmpty)
    }
}

/// A reader that goes away early (`jobgraph run … | head -1`): jobgraph must not die of SIGPIPE halfway
/// through the run, or its service would outlive it.
@Suite(.hangLimit(minutes: 1))
struct ClosedOutputTests {
    @Test func aClosedStandardOutputLeavesNoServiceBehind() async throws {
        let directory = try ScratchDirectory("jobgraph-closed-output")
        defer { directory.remove() }
        let port = try LoopbackSocket.freePort()
        try directory.write("""
            version: 1
            tasks:
              server:
                run: exec python3 -m http.server \(port) --bind 127.0.0.1
                service: {ready: {reachable: "127.0.0.1:\(port)"}, timeout: 300s}
              client:
                needs: [server]
                run: for i in $(seq 1 2000); do echo line $i; done; curl -sSf -o /dev/null http://127.0.0.1:\(port)/ && touch client.ran
            """, to: "p.yaml")
        let binary = try JobGraphBinary.location().path
        // `head -1` exits after the first line, closing the pipe jobgraph writes its progress to.
        // The pipeline file's full path tells this run's jobgraph from those of tests running beside it.
        let pipeline = directory.path + "/p.yaml"
        // The shell ends once both ends of its pipe have: its end is jobgraph's. The limit is a hang guard.
        let shell = await ExternalProgram.run("/bin/sh", ["-c", "'\(binary)' run '\(pipeline)' --progress plain | head -1"],
                                              environment: JobGraphBinary.environment, in: directory.path, within: .seconds(180))
        #expect(shell.output.hasPrefix("["), "head printed jobgraph's first line")
        // jobgraph went on after `head` left: the client still reached the service and ended.
        #expect(directory.exists("client.ran"))
        #expect(ProcessTable.living(withArgument: pipeline).isEmpty)
        #expect(ProcessTable.living(withArgument: "\(port)").isEmpty, "the service outlived jobgraph")
    }
}
