import JobGraphBasics
import PipelineModel
import Reporters
import TaskGraph
import Testing

/// `run --dry-run` and `list` show what gates each task (issue "Conditions, mutual exclusivity, parallel
/// groups …"): conditions, categories, parallel groups, services, and a dynamic fan-out as one task.
@Suite struct GateNotesPrinterTests {
    private static let yaml = """
        version: 1
        tasks:
          server:
            run: python3 -m http.server 8765
            service: {ready: {reachable: "127.0.0.1:8765"}, timeout: 10s}
          checks:
            description: Lint and unit tests.
            parallel: [make lint, make unit]
            exclusive: [db, disk]
          deploy:
            needs: [server, checks]
            conditions: [{env: TOKEN}, {file_exists: build/app}, {command: test -d .git}]
            run: ./deploy
          photo:
            needs: [deploy]
            foreach: {from: build/photos.json}
            run: echo {{ item }}
        """

    @Test func theDryRunPlanNotesEveryGateAndShowsADynamicFanOutAsOneTask() throws {
        var diagnostics = Diagnostics()
        let graph = try #require(PipelineCheck.graph(yaml: Self.yaml, file: "p.yaml", diagnostics: &diagnostics))
        #expect(PlanPrinter(jobs: 2).render(graph, processorCount: 2) == [
            "plan for p.yaml: 4 tasks on 1 queue, at most 2 at once",
            "step  task      queue    priority  qos      needs           notes",
            "1     server    default  normal    default  -               run; service, ready when 127.0.0.1:8765 is reachable within 10s",
            "2     checks    default  normal    default  -               parallel: 2 commands; exclusive: db, disk",
            "3     deploy    default  normal    default  server, checks  run; if $TOKEN is set and file build/app exists and `test -d .git` succeeds",
            "4     photo[*]  default  normal    default  deploy          run; fan-out from build/photos.json at run time",
        ])
    }

    @Test func theListNotesEveryGateAfterTheDescription() throws {
        var diagnostics = Diagnostics()
        let graph = try #require(PipelineCheck.graph(yaml: Self.yaml, file: "p.yaml", diagnostics: &diagnostics))
        #expect(TaskListPrinter().render(graph.pipeline) == [
            "p.yaml: 4 tasks",
            "task      description",
            "server    (service, ready when 127.0.0.1:8765 is reachable within 10s)",
            "checks    Lint and unit tests. (parallel: 2 commands; exclusive: db, disk)",
            "deploy    (if $TOKEN is set and file build/app exists and `test -d .git` succeeds)",
            "photo[*]  (items from build/photos.json at run time)",
        ])
    }
}
