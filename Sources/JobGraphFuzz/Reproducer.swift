#if !FUZZING
import Foundation

/// The normal build's command line: runs each named file through `FuzzCheck` and reports.
@main
enum Reproducer {
    /// Exits 0 when every file ran cleanly, 1 when any broke a promise, 2 on a usage or read error.
    static func main() {
        let files = Array(CommandLine.arguments.dropFirst())
        guard !files.isEmpty, !files.contains("-h"), !files.contains("--help") else {
            print("usage: JobGraphFuzz FILE...   (replays fuzz inputs through the pipeline check)")
            exit(files.isEmpty ? 2 : 0)
        }
        var status: Int32 = 0
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                FileHandle.standardError.write(Data("JobGraphFuzz: cannot read '\(file)'\n".utf8))
                status = max(status, 2)
                continue
            }
            let outcome = FuzzCheck.check([UInt8](data))
            let errors = outcome.diagnostics.count { $0.severity == .error }
            let graph = outcome.nodeCount.map { ", graph of \($0) nodes" } ?? ""
            print("\(file): \(outcome.diagnostics.count) diagnostics (\(errors) errors)\(graph)")
            for diagnostic in outcome.diagnostics {
                let place = diagnostic.location.map { "\($0.line):\($0.column): " } ?? ""
                print("  \(place)\(diagnostic.severity.rawValue): \(diagnostic.message)")
            }
            for violation in outcome.violations {
                print("  VIOLATION: \(violation)")
                status = max(status, 1)
            }
        }
        exit(status)
    }
}
#endif
