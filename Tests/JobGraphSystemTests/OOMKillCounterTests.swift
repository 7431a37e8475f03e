import Foundation
import JobGraphSystem
import JobGraphTestSupport
import Testing

/// The kernel's OOM-kill count as `OOMKillCounter` reads it: each kill counted since it was made goes
/// to at most one claim. The files here are written by the test in the kernel's own formats.
@Suite struct OOMKillCounterTests {
    @Test func eachKillCountedIsClaimedOnce() throws {
        let directory = try ScratchDirectory("jobgraph-oom")
        defer { directory.remove() }
        try directory.write("pgfault 10\noom_kill 4\npgmajfault 1\n", to: "vmstat")
        let counter = try #require(OOMKillCounter(path: directory.file("vmstat")))
        // The kills before the counter was made are no task's.
        #expect(!counter.claimKill())
        try directory.write("pgfault 12\noom_kill 6\npgmajfault 1\n", to: "vmstat")
        #expect(counter.claimKill())
        #expect(counter.claimKill())
        #expect(!counter.claimKill())
    }

    @Test func aFileWithoutTheLineOrNoFileGivesNoCounter() throws {
        let directory = try ScratchDirectory("jobgraph-oom")
        defer { directory.remove() }
        try directory.write("low 0\nhigh 0\nmax 0\n", to: "memory.events")
        #expect(OOMKillCounter(path: directory.file("memory.events")) == nil)
        #expect(OOMKillCounter(path: directory.file("missing")) == nil)
    }

    @Test func cgroupV2sOwnCountIsPreferredAndTheMachinesIsTheFallback() {
        // No such v2 cgroup: the machine's count (Linux 4.13 on has it).
        let fallback = OOMKillCounter.located(cgroupFile: "0::/no/such/cgroup-\(getpid())\n")
        #expect(fallback?.path == "/proc/vmstat")
        #expect(OOMKillCounter.located(cgroupFile: nil)?.path == "/proc/vmstat")
    }
}
