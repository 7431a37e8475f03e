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

    @Test func slurmTimesRead() {
        #expect(SlurmSpec.seconds(fromSlurmTime: "30:00") == 1800)
        #expect(SlurmSpec.seconds(fromSlurmTime: "2:00:00") == 7200)
        #expect(SlurmSpec.seconds(fromSlurmTime: "1-02:00:00") == 93600)
        #expect(SlurmSpec.seconds(fromSlurmTime: "soon") == nil)
    }
}
