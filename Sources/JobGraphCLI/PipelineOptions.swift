import ArgumentParser

/// The pipeline file and `--var` overrides, shared by every command that reads a pipeline.
struct PipelineOptions: ParsableArguments {
    @OptionGroup var source: PipelineSource

    @Option(name: .customLong("var"), help: ArgumentHelp("Set a variable, overriding 'vars'.", valueName: "NAME=VALUE"))
    var variables: [String] = []

    /// `--var` values as a dictionary; `validate()` has checked their form.
    var variableOverrides: [String: String] {
        var overrides: [String: String] = [:]
        for assignment in variables {
            guard let equals = assignment.firstIndex(of: "=") else { continue }
            overrides[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        }
        return overrides
    }

    /// The file to read and the task names; see `PipelineSource.resolved(tasks:)`.
    func resolved(tasks: [String]? = nil) throws -> ResolvedPipeline { try source.resolved(tasks: tasks) }

    func validate() throws {
        for assignment in variables {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                throw ValidationError("'--var \(assignment)' must have the form NAME=VALUE")
            }
        }
    }
}
