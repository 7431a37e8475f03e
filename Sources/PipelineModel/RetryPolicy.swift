import Glibc
import JobGraphBasics

/// Why an attempt failed, where jobgraph or Slurm can tell: the names `retry_on` takes besides exit codes
/// (docs/pipeline.md, "Retries").
public enum FailureCause: String, CaseIterable, Sendable {
    /// jobgraph's own `timeout` stopped it, or Slurm ended the job `TIMEOUT`.
    case timeout
    /// Killed for memory: Slurm's `OUT_OF_MEMORY`, or locally a SIGKILL that jobgraph did not send while
    /// the kernel counted an OOM kill.
    case oom
    /// Slurm ended the job `NODE_FAIL`.
    case nodeFail = "node_fail"
    /// Slurm ended the job `PREEMPTED`.
    case preempted
    /// Killed by a signal that jobgraph did not send.
    case signal
}

/// One entry of `retry_on`: a cause, or an exit code.
public enum RetryCondition: Hashable, Sendable {
    case cause(FailureCause)
    case exitCode(Int32)

    /// As the file writes it: `timeout`, `75`.
    public var text: String {
        switch self {
        case .cause(let cause): cause.rawValue
        case .exitCode(let code): String(code)
        }
    }
}

/// `retry_scale: {mem, time, cpus}`: each retry multiplies these resources of the task once more.
public struct RetryScale: Hashable, Sendable {
    /// Factors, each more than 0 and at most `largestFactor`; 1 leaves the resource as it is.
    public var mem: Double
    public var time: Double
    public var cpus: Double

    public static let largestFactor = 1000.0

    public init(mem: Double = 1, time: Double = 1, cpus: Double = 1) {
        self.mem = mem
        self.time = time
        self.cpus = cpus
    }

    /// `value` multiplied by `factor` once per retry before attempt `attempt` (1-based): attempt 1 keeps it.
    public static func scaled(_ value: Double, by factor: Double, attempt: Int) -> Double {
        // The exponent is bounded first: a factor of 1000 over many retries would reach infinity.
        value * pow(factor, Double(min(max(attempt - 1, 0), 64)))
    }

    /// Seconds of jobgraph's `timeout` (or Slurm's `time`) for attempt `attempt`, at most the longest
    /// duration a file may give.
    public func time(_ seconds: Double, attempt: Int) -> Double {
        min(Self.scaled(seconds, by: time, attempt: attempt), DurationText.longestSeconds)
    }

    /// The CPUs attempt `attempt` asks for, `count` on the first: rounded up, from 1 to 4096 (the most
    /// `cpus` a file may give). The one rule for a local attempt's `resources` and a Slurm request alike.
    public func cpus(_ count: Int64, attempt: Int) -> Int64 {
        Self.scaledAmount(count, by: cpus, attempt: attempt, atMost: Resources.mostCPUs)
    }

    /// The memory attempt `attempt` asks for, `amount` on the first (in any unit: bytes locally,
    /// megabytes for Slurm): rounded up, from 1 to `atMost`. The one rule for both, as `cpus(_:attempt:)`.
    public func memory(_ amount: Int64, attempt: Int, atMost: Int64) -> Int64 {
        Self.scaledAmount(amount, by: mem, attempt: attempt, atMost: atMost)
    }

    private static func scaledAmount(_ amount: Int64, by factor: Double, attempt: Int, atMost most: Int64) -> Int64 {
        guard factor != 1, attempt > 1 else { return amount }
        // Bounded as a Double first: a factor of 1000 over many retries would not fit an Int64.
        let scaled = min(Self.scaled(Double(amount), by: factor, attempt: attempt).rounded(.up), Double(most))
        return max(Int64(scaled), 1)
    }
}

extension TaskSpec {
    /// Whether a failure with `cause` and `exitCode` may be retried: always without `retry_on`, else when
    /// it lists the cause or the exit code.
    public func allowsRetry(cause: FailureCause?, exitCode: Int32?) -> Bool {
        guard let retryOn else { return true }
        return retryOn.contains { condition in
            switch condition {
            case .cause(let listed): listed == cause
            case .exitCode(let code): code == exitCode
            }
        }
    }
}

extension SlurmSpec {
    /// The options of attempt `attempt` under `scale`: `mem`, `time` and `cpus` multiplied once per retry
    /// (an unset `cpus` counts as Slurm's 1; an unset `mem` or `time` stays unset).
    public func scaled(by scale: RetryScale?, attempt: Int) -> SlurmSpec {
        guard let scale, attempt > 1 else { return self }
        var spec = self
        if let megabytes = memoryMegabytes, scale.mem != 1 {
            // Up to a petabyte: beyond it no cluster has the memory.
            spec.mem = "\(scale.memory(Int64(megabytes), attempt: attempt, atMost: 1_000_000_000))M"
        }
        if let time { spec.time = scale.time(time, attempt: attempt) }
        if scale.cpus != 1 { spec.cpus = Int(scale.cpus(Int64(cpus ?? 1), attempt: attempt)) }
        return spec
    }
}

extension TaskSpec {
    /// What attempt `attempt` (1-based) asks for: `resources` with `cpus` and `mem` multiplied by
    /// `retry_scale` once per retry (an unset `cpus` counts as 1; an unset `mem` stays unset), as a
    /// Slurm request is (`SlurmSpec.scaled`); `nil` when the task declares none and no retry scales its `cpus`.
    public func resources(attempt: Int) -> Resources? {
        guard let scale = retryScale, attempt > 1, scale.cpus != 1 || scale.mem != 1 else { return resources }
        var scaled = resources ?? Resources()
        if scale.cpus != 1 {
            let amount = Resources.Amount(name: Resources.cpus, value: scale.cpus(Int64(scaled.cpus), attempt: attempt))
            scaled = scaled.overridden(by: Resources([amount]))
        }
        if let bytes = scaled[Resources.memory], scale.mem != 1 {
            let amount = Resources.Amount(name: Resources.memory, value: scale.memory(bytes, attempt: attempt, atMost: Resources.mostAmount))
            scaled = scaled.overridden(by: Resources([amount]))
        }
        return scaled
    }
}
