import Foundation
import JobGraphTestSupport
import Testing

/// Task params through the binary (docs/pipeline.md, "Task parameters"; docs/cli.md, "run"): given as
/// `NAME=VALUE` after the task's name, checked against their declaration, part of their task's definition
/// only, shown by `list` and offered by the shell completions.
@Suite(.hangLimit(minutes: 2))
struct TaskParameterTests {
    static let pipeline = """
        version: 1
        vars: {ENV: from-vars}
        tasks:
          build:
            run: echo built > built.txt
            outputs: [built.txt]
          deploy:
            description: Deploy the build.
            needs: [build]
            params:
              ENV: {type: string, enum: [staging, prod], default: staging, help: "Where to deploy"}
              COUNT: {type: int, required: true, help: "How many"}
              DRY: {type: bool, default: false}
              DIR: {type: path}
            run: echo {{ ENV }} {{ COUNT }} $DRY "[$DIR]" > deploy.txt
            outputs: [deploy.txt]
          smoke:
            needs: [deploy]
            run: echo "{{ ENV }}" > smoke.txt
        """

    @Test func valuesAfterTheTasksNameReachItsTemplatesAndEnvironmentAndAPathIsMadeAbsolute() async throws {
        let directory = try ScratchDirectory("jobgraph-params")
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.file("project"), withIntermediateDirectories: true)
        try directory.write(Self.pipeline, to: "project/p.yaml")
        // Started from the folder above the pipeline's: `DIR=out` is that folder's `out`.
        let outcome = try await JobGraphBinary.run(["run", "project/p.yaml", "deploy", "ENV=prod", "COUNT=3", "DIR=out", "build"], in: directory)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let folder = URL(fileURLWithPath: directory.file(".")).standardizedFileURL.path
        #expect(directory.read("project/deploy.txt") == "prod 3 false [\(folder)/out]\n")
    }

    @Test func aParamNeitherGivenNorDefaultedIsEmptyAndShadowsAVarOnlyInItsTask() async throws {
        let folder = try PipelineFolder(Self.pipeline, prefix: "jobgraph-params")
        defer { folder.remove() }
        let run = try await folder.run(["smoke", "deploy", "COUNT=1"])
        #expect(run.status == 0, "\(run.outcome.standardError)")
        #expect(folder.directory.read("deploy.txt") == "staging 1 false []\n")
        // `smoke` takes no params: `{{ ENV }}` there is the var.
        #expect(folder.directory.read("smoke.txt") == "from-vars\n")
    }

    @Test func aChangedValueRerunsItsTaskOnly() async throws {
        let folder = try PipelineFolder(Self.pipeline, prefix: "jobgraph-params")
        defer { folder.remove() }
        #expect(try await folder.run(["deploy", "COUNT=1"]).executed == ["build", "deploy"])
        #expect(try await folder.run(["deploy", "COUNT=1"]).upToDate == ["build", "deploy"])
        let changed = try await folder.run(["deploy", "COUNT=1", "ENV=prod"])
        #expect(changed.executed == ["deploy"])
        #expect(changed.upToDate == ["build"])
    }

    @Test func badValuesAreErrorsWithANearMatchAndNothingRuns() async throws {
        let folder = try PipelineFolder(Self.pipeline, prefix: "jobgraph-params")
        defer { folder.remove() }
        let outcome = try await JobGraphBinary.run(
            ["run", "p.yaml", "deploy", "COUNT=many", "ENV=prd", "DRYY=true", "build", "ENV=prod"], in: folder.directory)
        #expect(outcome.status == 2)
        #expect(outcome.errorLines == [
            "error: parameter 'COUNT' of task 'deploy': expected an integer, found 'many'",
            "error: parameter 'ENV' of task 'deploy': 'prd' is not one of 'staging' or 'prod'; did you mean 'prod'?",
            "error: unknown parameter 'DRYY' of task 'deploy'; did you mean 'DRY'?",
            "error: unknown parameter 'ENV' of task 'build'; it takes none ('ENV' is a variable: set it with '--var ENV=…')",
        ])
        #expect(folder.directory.read("built.txt") == nil)
    }

    @Test func aMissingRequiredParamIsAnErrorAlsoWhenTheTaskIsOnlyNeeded() async throws {
        let folder = try PipelineFolder(Self.pipeline, prefix: "jobgraph-params")
        defer { folder.remove() }
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "smoke"], in: folder.directory)
        #expect(outcome.status == 2)
        #expect(outcome.errorLines == [
            "error: task 'deploy' needs its required parameter 'COUNT' (How many); give it after the task's name: 'jobgraph run deploy COUNT=…'",
        ])
    }

    @Test func aValueBeforeAnyTaskNameIsAnErrorThatSaysWhereItGoes() async throws {
        let folder = try PipelineFolder(Self.pipeline, prefix: "jobgraph-params")
        defer { folder.remove() }
        let outcome = try await JobGraphBinary.run(["run", "p.yaml", "COUNT=1", "deploy"], in: folder.directory)
        #expect(outcome.status == 2)
        #expect(outcome.errorLines == [
            "error: 'COUNT=1' comes before any task name; put a task's parameters after its name ('jobgraph run TASK COUNT=1'), or set a variable with '--var COUNT=1'",
        ])
    }

    @Test func aDeclarationThatCannotHoldIsAnErrorAtItsPlace() async throws {
        let directory = try ScratchDirectory("jobgraph-params")
        defer { directory.remove() }
        try directory.write("""
            version: 1
            tasks:
              d:
                params:
                  ENV: {enum: [staging, prod], default: stagin}
                  N: {type: int, default: x}
                  B: {type: bool, default: "yes", requird: true}
                  T: {type: strin}
                run: echo {{ ENV }} {{ ENVV }}
            """, to: "p.yaml")
        let outcome = try await JobGraphBinary.run(["validate", "p.yaml"], in: directory)
        #expect(outcome.status == 2)
        #expect(outcome.errorLines == [
            "p.yaml:5:45: error: 'default' of parameter 'ENV': 'stagin' is not one of 'staging' or 'prod'; did you mean 'staging'?",
            "p.yaml:6:31: error: 'default' of parameter 'N': expected an integer, found 'x'",
            "p.yaml:7:32: error: 'default' of parameter 'B': expected true or false, found 'yes'",
            "p.yaml:7:39: error: unknown key 'requird' in parameter 'B' of task 'd'; did you mean 'required'?",
            "p.yaml:8:17: error: unknown parameter type 'strin'; did you mean 'string'?",
            "p.yaml:9:25: error: unknown variable 'ENVV' in template; did you mean 'ENV'?",
        ])
    }

    @Test func listMarksTasksWithParamsAndShowsOnesParams() async throws {
        let folder = try PipelineFolder(Self.pipeline, prefix: "jobgraph-params")
        defer { folder.remove() }
        let all = try await JobGraphBinary.run(["list", "p.yaml"], in: folder.directory)
        #expect(all.status == 0, "\(all.standardError)")
        #expect(all.outputLines.contains("deploy  Deploy the build. (params: ENV, COUNT (required), DRY, DIR)"), "\(all.outputLines)")
        let one = try await JobGraphBinary.run(["list", "p.yaml", "deploy"], in: folder.directory)
        #expect(one.status == 0, "\(one.standardError)")
        #expect(one.outputLines == [
            "deploy: Deploy the build.",
            "usage: jobgraph run deploy ENV=… COUNT=… DRY=… DIR=…",
            "param  type                  default     help",
            "ENV    string: staging|prod  staging     Where to deploy",
            "COUNT  int                   (required)  How many",
            "DRY    bool                  false",
            #"DIR    path                  """#,
        ])
    }

    @Test func completionsOfferTaskNamesAndAfterATaskItsParamsNotGivenYet() async throws {
        let folder = try PipelineFolder(Self.pipeline, prefix: "jobgraph-params")
        defer { folder.remove() }
        // As the bash script generated by `--generate-completion-script` asks: the word index, the cursor
        // in the word, then the words.
        let tasks = try await JobGraphBinary.run(
            ["---completion", "run", "--", "positional@1", "3", "0", "jobgraph", "run", "p.yaml", ""], in: folder.directory)
        #expect(tasks.outputLines == ["build", "deploy", "smoke"])
        let parameters = try await JobGraphBinary.run(
            ["---completion", "run", "--", "positional@1", "6", "0", "jobgraph", "run", "-f", "p.yaml", "deploy", "ENV=prod", ""],
            in: folder.directory)
        #expect(parameters.outputLines == ["COUNT=", "DRY=", "DIR=", "build", "deploy", "smoke"])
        let prefixed = try await JobGraphBinary.run(
            ["---completion", "run", "--", "positional@1", "4", "1", "jobgraph", "run", "p.yaml", "deploy", "D"], in: folder.directory)
        #expect(prefixed.outputLines == ["DRY=", "DIR="])
    }
}
