/// Hears every event of a run, in order. Observers are called from one task only, one event at a time,
/// so they need no locks; a slow observer delays other observers, never the scheduling.
public protocol RunObserver: AnyObject {
    func observe(_ event: RunEvent)
    /// Hears events that arrived together, in order, as `observe(_:)` would one by one (the default).
    /// A reporter that writes overrides it to write them in one piece: a no-op rerun of 10,000 tasks
    /// sends 30,000 transitions at once, and a `write(2)` for each was a tenth of its wall time.
    func observe(batch events: [RunEvent])
    /// Called a few times a second while the run goes on, so views can advance their clocks.
    func tick()
    /// Called once after the last event; flush and close here.
    func close()
}

extension RunObserver {
    public func observe(batch events: [RunEvent]) {
        for event in events { observe(event) }
    }
    public func tick() {}
    public func close() {}
}
