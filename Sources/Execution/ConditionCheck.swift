import Foundation
import JobGraphBasics
import JobGraphSystem
import PipelineModel

/// One entry of a task's `conditions:`, checked just before the task would become ready; a task whose
/// condition is unmet is skipped (contract: "conditions").
public protocol ConditionCheck: Sendable {
    /// A short reading for events and logs: `file build/app exists`.
    var summary: String { get }
    /// Whether the condition holds now.
    func isMet(in context: ConditionContext) async -> Bool
}

/// What a condition may look at: the task's folder and environment, and a way to run a command.
public struct ConditionContext: Sendable {
    public var workingDirectory: String
    public var environment: [String: String]
    /// Runs a shell command through the run's executor (its output goes to the task's log); true on exit 0.
    public var runCommand: @Sendable (String) async -> Bool

    public init(workingDirectory: String, environment: [String: String], runCommand: @escaping @Sendable (String) async -> Bool) {
        self.workingDirectory = workingDirectory
        self.environment = environment
        self.runCommand = runCommand
    }
}

/// `file_exists: PATH`.
public struct FileExistsCheck: ConditionCheck {
    public var path: String
    public var summary: String { "file \(path) exists" }

    public func isMet(in context: ConditionContext) async -> Bool {
        FileManager.default.fileExists(atPath: String.absolute(path, in: context.workingDirectory))
    }
}

/// `env: NAME`: set and not empty.
public struct EnvironmentCheck: ConditionCheck {
    public var name: String
    public var summary: String { "$\(name) is set" }

    public func isMet(in context: ConditionContext) async -> Bool {
        !(context.environment[name] ?? "").isEmpty
    }
}

/// `command: CMD`: exits 0.
public struct CommandCheck: ConditionCheck {
    public var command: String
    public var summary: String { "`\(command)` succeeds" }

    public func isMet(in context: ConditionContext) async -> Bool {
        await context.runCommand(command)
    }
}

/// `reachable: HOST:PORT`: a TCP connection succeeds, retried briefly so a server just starting counts.
public struct ReachableCheck: ConditionCheck {
    public var host: String
    public var port: Int
    /// Seconds to keep trying.
    public var patience: Double = 1

    public var summary: String { "\(host):\(port) is reachable" }

    public func isMet(in context: ConditionContext) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(patience * 1000))
        while true {
            if TCPProbe.canConnect(host: host, port: port, timeout: 0.5) { return true }
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(100))  // a cancelled run simply stops trying
        }
    }
}

/// `platforms: [NAME, …]`: jobgraph runs on one of them (docs/pipeline.md, "Platforms").
public struct PlatformCheck: ConditionCheck {
    public var names: [String]
    /// Says which platform this is, so the skip's reason shows why: `platform is darwin (this is linux/amd64)`.
    public var summary: String { "platform is \(names.joined(separator: " or ")) (this is \(Platform.current))" }

    public func isMet(in context: ConditionContext) async -> Bool {
        names.contains { Platform.includes($0) }
    }
}

extension Condition {
    /// The check for this condition, its templates rendered for one task.
    /// - Parameter patience: seconds a `reachable` check keeps trying.
    func check(in context: TemplateContext, patience: Double = 1) throws(TemplateError) -> any ConditionCheck {
        switch self {
        case .fileExists(let path): FileExistsCheck(path: try path.rendered(in: context, as: .path(key: "file_exists")))
        case .environmentSet(let name): EnvironmentCheck(name: name)
        case .command(let command): CommandCheck(command: try command.rendered(in: context, as: .shellQuoted))
        case .reachable(let host, let port): ReachableCheck(host: host, port: port, patience: patience)
        case .platform(let names): PlatformCheck(names: names)
        }
    }
}
