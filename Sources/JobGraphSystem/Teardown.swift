/// How to stop a child's process group, as data: signal, wait, escalate, and finally SIGKILL.
///
/// Modelled on swift-subprocess's `TeardownStep`. Each step signals the whole group, then allows `grace`
/// for it to go away before the next step; after the last step the group gets SIGKILL. The contract's
/// cancellation is `.terminate(grace: .seconds(5))`; "a second SIGINT kills at once" is `.kill`. Signalling
/// a group only reaches every descendant because `ProcessSpawner` gives each child its own group.
public struct Teardown: Hashable, Sendable {
    /// One signal and the time allowed before the next step.
    public struct Step: Hashable, Sendable {
        /// Sent to the whole group.
        public var signal: ProcessSignal
        /// How long the group may take to end before the next step.
        public var grace: Duration

        /// A step sending `signal`, then waiting up to `grace`.
        public init(signal: ProcessSignal, grace: Duration) {
            self.signal = signal
            self.grace = grace
        }
    }

    /// The steps before the final SIGKILL, in order.
    public var steps: [Step]

    /// A teardown of `steps`, then SIGKILL.
    public init(steps: [Step]) { self.steps = steps }

    /// SIGTERM, up to `grace` to exit, then SIGKILL: the contract's cancellation.
    public static func terminate(grace: Duration) -> Teardown {
        Teardown(steps: [Step(signal: .terminate, grace: grace)])
    }

    /// SIGKILL at once.
    public static let kill = Teardown(steps: [])
}
