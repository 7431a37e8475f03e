import PipelineModel
import Testing

/// `executor:` and `slurm:` as the file gives them, and the Slurm options a task ends up with.
@Suite struct SlurmSpecTests {
    static let yaml = """
        version: 1
        executor: slurm
        slurm: {mode: jobs, partition: debug, time: 30m, mem: 1G, queue_size: 20, sbatch_args: ["--qos=normal"]}
        queues:
          heavy: {slurm: {cpus: 4, partition: big}}
        defaults:
          slurm: {account: lab}
        tasks:
          plain: {run: "true"}
          heavy: {run: "true", queue: heavy, qos: utility, timeout: 90s}
          own: {run: "true", queue: heavy, slurm: {cpus: 2, time: "1-00:00:00", sbatch_args: []}}
        """

    @Test func aTaskOverridesItsQueueWhichOverridesTheTopLevel() throws {
        let pipeline = try #require(load(Self.yaml).pipeline)
        #expect(pipeline.executor == .slurm)
        #expect(pipeline.slurm?.mode == .jobs)
        #expect(pipeline.slurm?.queueSize == 20)
        func spec(_ id: String) throws -> SlurmSpec { pipeline.slurm(for: try #require(pipeline.tasks.first { $0.id.rawValue == id })) }

        let plain = try spec("plain")
        #expect(plain.partition == "debug" && plain.account == "lab" && plain.cpus == nil && plain.time == 1800)
        let heavy = try spec("heavy")
        #expect(heavy.partition == "big" && heavy.cpus == 4 && heavy.account == "lab")
        let own = try spec("own")
        #expect(own.cpus == 2 && own.time == 86400 && own.sbatchArgs == [] && own.partition == "big")
        #expect(own.memoryMegabytes == 1024)
    }

    @Test func theArgumentsFollowTheMode() throws {
        let pipeline = try #require(load(Self.yaml).pipeline)
        let heavy = pipeline.slurm(for: try #require(pipeline.tasks.first { $0.id.rawValue == "heavy" }))
        #expect(heavy.taskArguments(mode: .jobs, niceness: 10, timeout: 90) == [
            "--partition=big", "--account=lab", "--mem=1G", "--cpus-per-task=4", "--time=0:30:00", "--nice=10", "--qos=normal",
        ])
        // A step runs inside the allocation: no partition, account or queue priority of its own.
        #expect(heavy.taskArguments(mode: .allocation, niceness: 10, timeout: 90) == ["--cpus-per-task=4", "--time=0:30:00"])
        // Without a `time`, Slurm's limit is a backstop a minute beyond jobgraph's own timeout.
        #expect(SlurmSpec().taskArguments(mode: .jobs, niceness: 0, timeout: 90) == ["--cpus-per-task=1", "--time=0:03:00"])
        #expect(SlurmSpec(partition: "debug", nodes: 2).allocationArguments(jobs: 8, cpusPerTask: 2)
            == ["--ntasks=8", "--cpus-per-task=2", "--partition=debug", "--nodes=2"])
    }

    @Test func slurmTimesReadAndWrite() {
        #expect(SlurmSpec.seconds(fromSlurmTime: "30:00") == 1800)
        #expect(SlurmSpec.seconds(fromSlurmTime: "2:00:00") == 7200)
        #expect(SlurmSpec.seconds(fromSlurmTime: "1-02:00:00") == 93600)
        #expect(SlurmSpec.seconds(fromSlurmTime: "soon") == nil)
        #expect(SlurmSpec.slurmTime(seconds: 61) == "0:02:00")
        #expect(SlurmSpec.slurmTime(seconds: 93600) == "1-2:00:00")
    }
}
