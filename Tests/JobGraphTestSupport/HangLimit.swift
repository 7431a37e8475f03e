#if canImport(Glibc)
import Glibc
#endif
import Testing

extension Trait where Self == TimeLimitTrait {
    /// A time limit that turns a hang into a failure: `minutes` in a normal build, four times as long under
    /// ThreadSanitizer.
    ///
    /// Why longer there: the sanitized tests run several times slower, on the same few threads, beside the
    /// sanitized `jobgraph` binary many of them start. On two cores, 35 tests of a CI run that otherwise
    /// passed went over a one-minute limit together and ended about 80 s after they began; the same tests had
    /// taken 72 s in the run before, which passed. `.ci/watchdog` still ends a run that hangs outright.
    public static func hangLimit(minutes: Int) -> Self {
        .timeLimit(.minutes(minutes * (TestBuild.isThreadSanitized ? 4 : 1)))
    }
}

/// How this test process was built.
public enum TestBuild {
    /// Whether ThreadSanitizer's runtime is in the process (`swift test --sanitize=thread`): its entry point
    /// is among the test binary's dynamic symbols then, and only then.
    public static let isThreadSanitized = dlsym(nil, "__tsan_init") != nil

    /// How many times longer a hang guard (`eventually`, a wait for `jobgraph` to exit) waits in this
    /// build: four under ThreadSanitizer, as `hangLimit`, for the same reason.
    public static let hangGuardFactor = isThreadSanitized ? 4 : 1
}
