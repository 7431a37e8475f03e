extension String {
    /// A count with its noun: `1 task`, `3 tasks`; `plural` for a noun that takes more than an `s`
    /// (`2 dependencies`).
    public init(counting number: Int, _ noun: String, plural: String? = nil) {
        self = "\(number) " + (number == 1 ? noun : plural ?? noun + "s")
    }
}
