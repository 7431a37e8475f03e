extension Duration {
    /// The duration as a number of seconds, for times shown and recorded (`executing -> succeeded  (1.25s)`).
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
