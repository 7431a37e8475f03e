import JobGraphTestSupport
import Testing

/// `run --dry-run --executor slurm` needs no cluster: it shows where each task would go and with what.
@Suite struct SlurmPlanTests {
    @Test func theDryRunShowsEachTasksSlurmOptions() async throws {
        let directory = try ScratchDirectory("jobgraph-slurm-plan")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            slurm: {partition: debug, time: 1h}
            tasks:
              fetch: {download: {url: "http://127.0.0.1:1/x", to: x}}
              work: {needs: [fetch], run: "true", qos: background, slurm: {cpus: 2}}
            """, to: "p.yaml")
        let allocation = try await JobGraphBinary.run(["run", "p.yaml", "--dry-run", "--executor", "slurm", "--jobs", "3"], in: directory)
        #expect(allocation.status == 0)
        #expect(allocation.outputLines.contains(
            "on Slurm, allocation mode: salloc --no-shell --ntasks=3 --cpus-per-task=2 --partition=debug --time=1:00:00; a worker step per slot runs the tasks (srun --exact -n1)"),
            "\(allocation.outputLines)")
        #expect(allocation.outputLines.contains { $0.hasPrefix("1 ") && $0.hasSuffix("runs in jobgraph's process") })
        #expect(allocation.outputLines.contains { $0.hasPrefix("2 ") && $0.hasSuffix("--cpus-per-task=2 --time=1:00:00") })

        // A `parallel` group may hold several slots' CPUs: each task gets a step of its own then.
        try directory.write("version: 1\ntasks:\n  both: {parallel: [\"true\", \"true\"]}\n", to: "parallel.yaml")
        let steps = try await JobGraphBinary.run(["run", "parallel.yaml", "--dry-run", "--executor", "slurm", "--jobs", "2"], in: directory)
        #expect(steps.outputLines.contains("on Slurm, allocation mode: salloc --no-shell --ntasks=2 --cpus-per-task=1 --time=1:00:00; each task a step (srun --exact -n1)"),
                "\(steps.outputLines)")

        let jobs = try await JobGraphBinary.run(["run", "p.yaml", "--dry-run", "--executor", "slurm", "--slurm-mode", "jobs"], in: directory)
        #expect(jobs.outputLines.contains { $0.hasPrefix("2 ") && $0.hasSuffix("--partition=debug --cpus-per-task=2 --time=1:00:00 --nice=19") },
                "\(jobs.outputLines)")
        let local = try await JobGraphBinary.run(["run", "p.yaml", "--dry-run"], in: directory)
        #expect(!local.outputLines.contains { $0.contains("--cpus-per-task") })
    }
}
