import ArgumentParser

/// The pipeline file and `--var` overrides, shared by every command that reads a pipeline.
struct PipelineOptions: ParsableArguments {
    @Argument(help: "The pipeline file (YAML).", completion: .file(extensions: ["yaml", "yml"]))
    var file: String

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

    func validate() throws {
        for assignment in variables {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                throw ValidationError("'--var \(assignment)' must have the form NAME=VALUE")
            }
        }
    }
}
