/// Hears every event of a run, in order. Observers are called from one task only, one event at a time,
/// so they need no locks; a slow observer delays other observers, never the scheduling.
public protocol RunObserver: AnyObject {
    func observe(_ event: RunEvent)
    /// Called once after the last event; flush and close here.
    func close()
}

extension RunObserver {
    public func close() {}
}
