import Execution
import JobGraphBasics

/// Hands a run's events to its observers from a single task, a batch at a time, with a periodic tick.
///
/// Why paced rather than woken by each event: a run of 10,000 short tasks sends 30,000 transitions in
/// about 20,000 bursts, and waking for each burst (through a forwarding task, twice) cost a thread
/// wake-up per burst on a machine whose cores the tasks themselves keep busy. Reading what has queued
/// every `pace` shows every event at most that much later and wakes about 100 times a second.
///
/// Why slower while events flow: each batch delivered first commits the history rows it shows, and that
/// commit costs about the same for 5 tasks as for 25. Reading every 10 ms while 10,000 short tasks ran
/// meant 500 commits, a tenth of jobgraph's own CPU time (task-clock of its threads, 1,130 ms against
/// 990 ms every 50 ms). So a batch is followed by `busyPace`, and only a quiet read by `pace`: the first
/// event after a quiet spell still shows within `pace`, and a stream of them in 20 batches a second.
public enum ObserverHub {
    /// Drains `events` into `observers` until the stream ends, then closes each observer.
    /// - Parameters:
    ///   - tickInterval: how often observers hear `tick()`.
    ///   - pace: how often the queued events are read while none come.
    ///   - busyPace: how long after a batch the next read waits.
    ///   - beforeDelivering: called before each batch reaches the observers, so that what they show never
    ///     runs ahead of what the run has recorded (the history's commit, see `RunRecorder.flush`; up-to-date
    ///     verdicts, which a kill loses at no cost, may be shown first).
    public static func drain(_ events: EventChannel<RunEvent>, into observers: sending [any RunObserver],
                             tickInterval: Duration = .milliseconds(250), pace: Duration = .milliseconds(10),
                             busyPace: Duration = .milliseconds(50),
                             beforeDelivering: (@Sendable () -> Void)? = nil) async {
        let clock = ContinuousClock()
        var nextTick = clock.now + tickInterval
        while true {
            let (batch, isFinished) = events.takeAvailable()
            if !batch.isEmpty {
                beforeDelivering?()
                // Each observer takes the batch whole: reporters write it in one piece.
                for observer in observers { observer.observe(batch: batch) }
            }
            if isFinished { break }
            if clock.now >= nextTick {
                for observer in observers { observer.tick() }
                nextTick = clock.now + tickInterval
            }
            // Not cancellable: the run ends the stream, which ends the pause too.
            await events.pause(for: batch.isEmpty ? pace : busyPace)
        }
        for observer in observers { observer.close() }
    }
}
