import PipelineModel
import Testing

/// `resources:` in a task and at the top level, `--resources`, and what a task asking too much gets.
@Suite struct ResourcesTests {
    @Test func aTaskAndTheTopLevelDeclareResources() throws {
        let loaded = load("""
            version: 1
            resources: {mem: 32G, gpus: 2, licences: 3}
            tasks:
              map: {run: "true", resources: {cpus: 4, mem: 512M, gpus: 1, licences: 1}}
              plain: {run: "true"}
            """)
        #expect(loaded.lines == [])
        let pipeline = try #require(loaded.pipeline)
        #expect(pipeline.resources?["mem"] == 32 << 30)
        #expect(pipeline.resources?["licences"] == 3)
        let map = try #require(loaded.task("map"))
        #expect(map.resources?.cpus == 4)
        #expect(map.resources?["mem"] == 512 << 20)
        #expect(map.resources?["gpus"] == 1)
        #expect(loaded.task("plain")?.resources == nil)
        #expect(pipeline.declaresResources)
    }

    @Test func everyBadAmountIsAnErrorAtItsPlace() {
        let loaded = load("""
            version: 1
            resources: {cpus: 2, mem: 0G}
            tasks:
              a: {run: "true", resources: {cpus: 0, mem: 8X, gpus: -1}}
              b: {run: "true", resources: {cpus: 1e400, mem: 4000, licences: 1.5}}
              c: {run: "true", resources: [cpus]}
              d: {run: "true", resources: {"9lives": 1, mem: 1e400G}}
            """)
        #expect(loaded.pipeline == nil)
        #expect(loaded.lines == [
            "pipeline.yaml:2:13: error: the total of 'cpus' is '--jobs'; remove 'cpus' from the top-level 'resources'",
            "pipeline.yaml:2:27: error: invalid amount '0G' for 'mem' in the top-level 'resources'; use a size with a unit such as '512M', '8G' or '1T'",
            "pipeline.yaml:4:38: error: invalid amount '0' for 'cpus' in 'resources' of task 'a'; use a whole number from 1 to 4096",
            "pipeline.yaml:4:46: error: invalid amount '8X' for 'mem' in 'resources' of task 'a'; use a size with a unit such as '512M', '8G' or '1T'",
            "pipeline.yaml:4:56: error: invalid amount '-1' for 'gpus' in 'resources' of task 'a'; use a whole number from 0 to 1152921504606846976",
            "pipeline.yaml:5:38: error: invalid amount '1e400' for 'cpus' in 'resources' of task 'b'; use a whole number from 1 to 4096",
            "pipeline.yaml:5:50: error: invalid amount '4000' for 'mem' in 'resources' of task 'b'; use a size with a unit such as '512M', '8G' or '1T'",
            "pipeline.yaml:5:66: error: invalid amount '1.5' for 'licences' in 'resources' of task 'b'; use a whole number from 0 to 1152921504606846976",
            "pipeline.yaml:6:31: error: expected a mapping of resource names to amounts such as '{cpus: 4, mem: 8G}' for 'resources', found a list",
            "pipeline.yaml:7:32: error: invalid resource name '9lives' in 'resources' of task 'd'; use a letter, then letters, digits, '_' or '-'",
            "pipeline.yaml:7:50: error: invalid amount '1e400G' for 'mem' in 'resources' of task 'd'; use a size with a unit such as '512M', '8G' or '1T'",
        ])
    }

    @Test func cpusOrMemInBothResourcesAndTheTasksOwnSlurmIsAnError() {
        let loaded = load("""
            version: 1
            tasks:
              a: {run: "true", resources: {cpus: 2}, slurm: {cpus: 4}}
            """)
        #expect(loaded.lines == [
            "pipeline.yaml:3:38: error: 'cpus' of task 'a' is given in both 'resources' and 'slurm'; give it once, in 'resources', which Slurm takes too",
        ])
    }

    @Test func resourcesFeedTheSlurmRequestOverTheQueueAndTopLevel() throws {
        let loaded = load("""
            version: 1
            slurm: {cpus: 8, mem: 64G}
            tasks:
              a: {run: "true", resources: {cpus: 2, mem: 1536M, gpus: 1}}
              b: {run: "true"}
            """)
        let pipeline = try #require(loaded.pipeline)
        let a = pipeline.slurm(for: try #require(loaded.task("a")))
        #expect(a.cpus == 2 && a.mem == "1536M" && a.gpus == 1)
        let b = pipeline.slurm(for: try #require(loaded.task("b")))
        #expect(b.cpus == 8 && b.mem == "64G" && b.gpus == nil)
        // `retry_scale` scales the request made from `resources` as it scales `slurm:`'s.
        let retried = a.scaled(by: RetryScale(mem: 2, cpus: 2), attempt: 2)
        #expect(retried.cpus == 4 && retried.mem == "3072M")
    }

    @Test func theOptionOverridesTheFilesTotalsAndMemDefaultsToTheMachine() throws {
        let option = try Resources.parseOption("mem=16G,gpus=0").get()
        let declared = Resources([.init(name: "gpus", value: 2), .init(name: "licences", value: 3)])
        let totals = Resources.totals(declared: declared, option: option, machineMemory: 1 << 40)
        #expect(totals["mem"] == 16 << 30 && totals["gpus"] == 0 && totals["licences"] == 3)
        #expect(Resources.totals(declared: nil, option: nil, machineMemory: 1 << 40)["mem"] == 1 << 40)
        for bad in ["mem", "mem=", "mem=16", "cpus=2", "gpus=-1", "=3", "mem=16G,,gpus=1", "gpus=1e400"] {
            #expect(throws: Resources.AmountError.self, "\(bad)") { try Resources.parseOption(bad).get() }
        }
    }

    @Test func aTaskAskingMoreThanATotalIsAnErrorNamingWhereTheTotalComesFrom() throws {
        let loaded = load("""
            version: 1
            resources: {gpus: 2}
            tasks:
              a: {run: "true", resources: {cpus: 4, gpus: 3}}
              b: {run: "true", resources: {mem: 2G, licences: 9}}
            """)
        let pipeline = try #require(loaded.pipeline)
        let option = try Resources.parseOption("mem=1G").get()
        let totals = Resources.totals(declared: pipeline.resources, option: option, machineMemory: 1 << 40)
        let diagnostics = Resources.excessDiagnostics(of: pipeline.tasks, totals: totals, declared: pipeline.resources, option: option, jobs: 2)
        #expect(diagnostics.sorted.map { "\($0.location!.line):\($0.location!.column): \($0.message)" } == [
            "4:38: task 'a' asks for cpus 4, more than the total: '--jobs' 2",
            "4:47: task 'a' asks for gpus 3, more than the total: the top-level 'resources' (gpus: 2)",
            "5:37: task 'b' asks for mem 2G, more than the total: '--resources mem=1G'",
        ])
        let machine = Resources.excessDiagnostics(of: pipeline.tasks, totals: Resources.totals(declared: nil, option: nil, machineMemory: 1 << 30),
                                                  declared: nil, option: nil, jobs: 4)
        #expect(machine.sorted.map(\.message) == ["task 'b' asks for mem 2G, more than the total: the machine's memory, 1G"])
    }

    @Test func amountsReadBackAsTheFileWritesThem() {
        #expect(Resources.text(8 << 30, of: "mem") == "8G")
        #expect(Resources.text(1536 << 20, of: "mem") == "1.5G")
        #expect(Resources.text(3, of: "gpus") == "3")
    }
}
