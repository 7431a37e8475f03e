/// Hears every event of a run, in order. Observers are called from one task only, one event at a time,
/// so they need no locks; a slow observer delays other observers, never the scheduling.
public protocol RunObserver: AnyObject {
    func observe(_ event: RunEvent)
    /// Called a few times a second while the run goes on, so views can advance their clocks.
    func tick()
    /// Called once after the last event; flush and close here.
    func close()
}

extension RunObserver {
    public func tick() {}
    public func close() {}
}
