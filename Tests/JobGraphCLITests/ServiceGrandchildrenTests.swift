import Foundation
import JobGraphTestSupport
import Testing

/// A service whose command starts processes of its own (contract: "service"): when nothing needs it any
/// more, stopping its process group stops its grandchildren too, before the run ends, so the end-of-run
/// sweep finds nothing left behind.
@Suite(.hangLimit(minutes: 1))
struct ServiceGrandchildrenTests {
    @Test func stoppingAServiceStopsItsGrandchildren() async throws {
        let port = try LoopbackSocket.freePort()
        // Two grandchildren, one of them a grandchild's child, each saying it is up; then the server.
        let folder = try PipelineFolder("""
            version: 1
            tasks:
              server:
                run: "sh -c 'touch one.up; exec sleep 300.761' & sh -c 'sh -c \\"touch two.up; exec sleep 300.762\\" & wait' & exec python3 -m http.server \(port) --bind 127.0.0.1"
                service: {ready: {reachable: "127.0.0.1:\(port)"}, timeout: 300s}
              client:
                needs: [server]
                run: "until [ -e one.up ] && [ -e two.up ]; do sleep 0.01; done; echo both up"
            """, prefix: "jobgraph-service")
        defer { folder.remove() }
        let run = try await folder.run()
        #expect(run.status == 0, "\(run.outcome.standardOutput)")
        #expect(run.outcome.outputLines.contains("client | both up"))
        #expect(run.finalStates == ["server": "succeeded", "client": "succeeded"])
        // jobgraph has exited: anything still living with a marker would have outlived it.
        #expect(ProcessTable.living(withArgument: "300.761").isEmpty)
        #expect(ProcessTable.living(withArgument: "300.762").isEmpty)
        #expect(ProcessTable.living(withArgument: "\(port)").isEmpty)
        #expect(!run.outcome.standardOutput.contains("left behind"), "\(run.outcome.outputLines)")
    }
}
