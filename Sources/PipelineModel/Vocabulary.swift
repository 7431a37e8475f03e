/// A task's `priority`; higher starts first among ready tasks competing for a slot.
public enum Priority: String, CaseIterable, Sendable, Comparable {
    case veryLow = "very-low"
    case low
    case normal
    case high
    case veryHigh = "very-high"

    /// Larger is more urgent.
    public var rank: Int {
        switch self {
        case .veryLow: -8
        case .low: -4
        case .normal: 0
        case .high: 4
        case .veryHigh: 8
        }
    }

    public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rank < rhs.rank }
}

/// A quality-of-service class, as `qos` on a task or queue.
public enum QualityOfService: String, CaseIterable, Sendable {
    case userInteractive = "user-interactive"
    case userInitiated = "user-initiated"
    case utility
    case background
    case `default`

    /// The niceness a shell task's process runs with (contract: scheduling rules).
    public var niceness: Int32 {
        switch self {
        case .background: 19
        case .utility: 10
        case .userInteractive, .userInitiated, .default: 0
        }
    }
}

/// A task's `when`: which outcomes of its needs let it run.
public enum RunWhen: String, CaseIterable, Sendable {
    /// All needs succeeded (or were up to date, or skipped by a condition).
    case success
    /// Some need failed.
    case failure
    /// Once needs are done, whatever they did.
    case always
}

/// The states a task goes through (contract: "Task states and the live view").
public enum TaskState: String, CaseIterable, Sendable, Codable {
    case pending
    case waiting
    case ready
    case executing
    case succeeded
    case failed
    case cancelled
    case skipped
    case upToDate = "up-to-date"
    /// Its outputs and log were restored from the output cache instead of running it (docs/cache.md).
    case restored

    public var isTerminal: Bool {
        switch self {
        case .succeeded, .failed, .cancelled, .skipped, .upToDate, .restored: true
        case .pending, .waiting, .ready, .executing: false
        }
    }
}
