import Execution
import Foundation
import JobGraphTestSupport
import PipelineModel
import Testing

/// `service:` with real processes (contract: "service"): a background task whose dependents start once
/// it is ready, stopped (its process group) as soon as nothing left needs it and always before the run
/// ends; not ready in time, or dying early, it fails what still needs it.
@Suite(.hangLimit(minutes: 1))
struct ServiceRunTests {
    @Test func aServiceIsReachedOverLoopbackByItsDependentsAndIsGoneWhenTheRunEnds() async throws {
        let port = try LoopbackSocket.freePort()
        let run = try await RealRun.run("""
            version: 1
            tasks:
              site:
                run: mkdir -p site && echo hello from the service > site/index.html
              server:
                needs: [site]
                run: exec python3 -m http.server \(port) --bind 127.0.0.1 --directory site
                service: {ready: {reachable: "127.0.0.1:\(port)"}, timeout: 300s}
              curl-client:
                needs: [server]
                run: curl -sSf http://127.0.0.1:\(port)/index.html
              python-client:
                needs: [server]
                run: python3 -c "import urllib.request as u; print(u.urlopen('http://127.0.0.1:\(port)/').read().decode().strip())"
              report:
                needs: [curl-client, python-client]
                run: echo both answered
            """, jobs: 4)
        #expect(run.finalStates == [
            "site": .succeeded, "server": .succeeded, "curl-client": .succeeded, "python-client": .succeeded, "report": .succeeded,
        ])
        #expect(run.output(of: "curl-client") == ["hello from the service"])
        #expect(run.output(of: "python-client") == ["hello from the service"])
        // The clients went ahead while the service executed, and it ended after them: stopped as planned.
        let serverEnded = try #require(run.terminalIndex(of: "server"))
        for client: TaskID in ["curl-client", "python-client"] {
            let started = try #require(run.index(of: client, from: .ready, to: .executing))
            let ended = try #require(run.terminalIndex(of: client))
            #expect(started < serverEnded && ended < serverEnded)
        }
        #expect(run.summary?.hasFailures == false)
        // The run has ended: its service's process has too, not merely been asked to.
        #expect(ProcessTable.living(withArgument: "\(port)").isEmpty)
        #expect(run.brokenLifecycles.isEmpty, "\(run.brokenLifecycles)")
    }

    @Test func aServiceIsStoppedAsSoonAsNothingLeftNeedsIt() async throws {
        // `unrelated` runs until the service has ended: a runner that kept the service until the end of
        // the run would never get there (the time limit is the hang guard).
        let run = try await RealRun.run("""
            version: 1
            tasks:
              server:
                run: echo up; exec sleep 300.611
                service: {timeout: 300s}
              client: {needs: [server], run: "echo used it"}
              unrelated: {run: "until [ -e server.ended ]; do sleep 0.01; done"}
            """, jobs: 3, react: { event, _, directory in
            if case .transition(let transition) = event, transition.task == "server", transition.to.isTerminal {
                try directory.write("", to: "server.ended")
            }
        })
        #expect(run.finalStates == ["server": .succeeded, "client": .succeeded, "unrelated": .succeeded])
        #expect(ProcessTable.living(withArgument: "300.611").isEmpty)
    }

    @Test func aServiceNotReadyInTimeFailsAndItsDependentsAreSkipped() async throws {
        let socket = try LoopbackSocket()  // bound, never listening: never reachable
        let run = try await RealRun.run("""
            version: 1
            tasks:
              server:
                run: exec sleep 300.612
                service: {ready: {reachable: "127.0.0.1:\(socket.port)"}, timeout: 1s}
              client: {needs: [server], run: "touch client.ran"}
              cleanup: {needs: [server], when: always, run: "echo cleaning"}
            """, jobs: 2)
        #expect(run.finalStates == ["server": .failed, "client": .skipped, "cleanup": .succeeded])
        let failed = try #require(run.transition(of: "server", to: .failed))
        #expect(failed.error == "not ready within 1s")
        #expect(run.summary?.failures.map(\.reason) == ["not ready within 1s"])
        #expect(!run.directory.exists("client.ran"))
        #expect(ProcessTable.living(withArgument: "300.612").isEmpty)
    }

    @Test func aServiceThatDiesEarlyFailsWhatStillNeedsIt() async throws {
        // `client` needs the service and `gate`; the service dies while `gate` still runs, so `client` has
        // not started and must not start without it, even with `--keep-going`.
        let run = try await RealRun.run("""
            version: 1
            tasks:
              server:
                run: echo up; until [ -e die ]; do sleep 0.01; done; exit 3
                service: {timeout: 300s}
              gate: {run: "until [ -e release ]; do sleep 0.01; done"}
              client: {needs: [server, gate], run: "touch client.ran"}
              rescue: {needs: [server, gate], when: failure, run: "echo rescuing"}
            """, jobs: 3, keepGoing: true, react: { event, _, directory in
            if case .output("server", "up") = event { try directory.write("", to: "die") }
            if case .transition(let transition) = event, transition.task == "server", transition.to == .failed {
                try directory.write("", to: "release")
            }
        })
        #expect(run.finalStates == ["server": .failed, "gate": .succeeded, "client": .skipped, "rescue": .succeeded])
        #expect(run.transition(of: "server", to: .failed)?.exitCode == 3)
        #expect(!run.directory.exists("client.ran"))
        #expect(run.summary?.hasFailures == true)
    }

    @Test func anInterruptStopsTheServiceAndWhatUsesIt() async throws {
        let run = try await RealRun.run("""
            version: 1
            tasks:
              server:
                run: echo up; exec sleep 300.613
                service: {timeout: 300s}
              client: {needs: [server], run: "echo using; exec sleep 300.614"}
            """, jobs: 2, react: { event, runner, _ in
            if case .output("client", "using") = event { runner.control(.interrupt) }
        })
        #expect(run.summary?.stop == .interrupt)
        #expect(run.finalStates == ["server": .cancelled, "client": .cancelled])
        #expect(ProcessTable.living(withArgument: "300.613").isEmpty)
        #expect(ProcessTable.living(withArgument: "300.614").isEmpty)
    }

    @Test func aServiceThatEndsOnItsOwnWhileNeededFailsEvenWithExitZero() async throws {
        let run = try await RealRun.run("""
            version: 1
            tasks:
              quitter:
                run: echo bye
                service: {ready: {file_exists: never.txt}, timeout: 300s}
              client: {needs: [quitter], run: "touch client.ran"}
            """, jobs: 2, keepGoing: true)
        #expect(run.finalStates == ["quitter": .failed, "client": .skipped])
        let failed = try #require(run.transition(of: "quitter", to: .failed))
        #expect(failed.error == "the service ended while 1 task still needs it")
        #expect(failed.exitCode == 0)
        #expect(!run.directory.exists("client.ran"))
        #expect(run.summary?.hasFailures == true)
    }
}
