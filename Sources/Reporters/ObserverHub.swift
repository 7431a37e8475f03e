import Execution
import Glibc
import JobGraphBasics

/// Hands a run's events to its observers from a thread of its own, a batch at a time, with a periodic tick.
///
/// Why a thread of its own: before each batch the hub waits for the history to commit what it shows
/// (`beforeDelivering`), and the observers write to terminals, pipes and files, any of which may block;
/// on a thread of Swift's cooperative pool (two on this machine) that wait would hold up every task
/// of the pool meanwhile.
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
    /// Drains `events` into `observers` until the stream ends, then closes each observer; returns once
    /// they are closed. The observers are called on the hub's thread only.
    /// - Parameters:
    ///   - tickInterval: how often observers hear `tick()`.
    ///   - pace: how often the queued events are read while none come.
    ///   - busyPace: how long after a batch the next read waits.
    ///   - beforeDelivering: called before each batch reaches the observers, so that what they show never
    ///     runs ahead of what the run has recorded (the history's commit, see `RunRecorder.flush`; up-to-date
    ///     verdicts, which a kill loses at no cost, may be shown first). It may block.
    public static func drain(_ events: EventChannel<RunEvent>, into observers: sending [any RunObserver],
                             tickInterval: Duration = .milliseconds(250), pace: Duration = .milliseconds(10),
                             busyPace: Duration = .milliseconds(50),
                             beforeDelivering: (@Sendable () -> Void)? = nil) async {
        let delivery = Delivery(events: events, observers: observers, tickInterval: tickInterval, pace: pace,
                                busyPace: busyPace, beforeDelivering: beforeDelivering)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            do {
                let thread = try JoinableThread.start {
                    delivery.run()
                    done.resume()
                }
                pthread_detach(thread)
            } catch {
                // No thread to be had (the process is at its limit): deliver here rather than not at all.
                delivery.run()
                done.resume()
            }
        }
    }

    /// What the hub's thread does, and everything it needs.
    ///
    /// `@unchecked Sendable`: made on the caller's thread and then used on the hub's thread only.
    private final class Delivery: @unchecked Sendable {
        let events: EventChannel<RunEvent>
        let observers: [any RunObserver]
        let tickInterval, pace, busyPace: Duration
        let beforeDelivering: (@Sendable () -> Void)?

        init(events: EventChannel<RunEvent>, observers: [any RunObserver], tickInterval: Duration, pace: Duration,
             busyPace: Duration, beforeDelivering: (@Sendable () -> Void)?) {
            self.events = events
            self.observers = observers
            self.tickInterval = tickInterval
            self.pace = pace
            self.busyPace = busyPace
            self.beforeDelivering = beforeDelivering
        }

        func run() {
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
                events.pause(for: batch.isEmpty ? pace : busyPace)
            }
            for observer in observers { observer.close() }
        }
    }
}
