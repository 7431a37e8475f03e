import Dispatch
import JobGraphCLI

// Signals are blocked here, on the main thread, before any other thread exists, and read later through
// the event loop's signalfd. The main thread then parks instead of draining the main queue: the async
// `main` that Swift would otherwise use hands this thread to dispatch, which clears its signal mask and
// would let SIGINT end the process before jobgraph can stop its tasks.
// The session watchdog is this executable too; in it, this never returns.
Entrypoint.prepareHeap()
Entrypoint.serveWatchdogIfAsked()
Entrypoint.prepareSignals()
Task.detached { await Entrypoint.main() }
DispatchSemaphore(value: 0).wait()
