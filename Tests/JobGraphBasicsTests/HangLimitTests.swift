import Foundation
import JobGraphTestSupport
import Testing

/// The hang limits stretch under ThreadSanitizer, and only there: `.ci/test` says which build it runs.
struct HangLimitTests {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["JOBGRAPH_TEST_BUILD"] != nil))
    func theBuildIsRecognisedAsCIRunsIt() {
        let expected = ProcessInfo.processInfo.environment["JOBGRAPH_TEST_BUILD"] == "thread-sanitizer"
        #expect(TestBuild.isThreadSanitized == expected)
    }
}
