import Glibc
import JobGraphSystem
import Testing

@Suite struct DescriptorLimitTests {
    @Test func theSoftLimitIsRaisedAsFarAsTheHardLimitAllows() throws {
        // From the soft limit most shells give (the test process may have more already).
        var limit = rlimit()
        #expect(getrlimit(DescriptorLimit.resource, &limit) == 0)
        let hard = limit.rlim_max
        limit.rlim_cur = min(limit.rlim_cur, 1024)
        #expect(setrlimit(DescriptorLimit.resource, &limit) == 0)

        let raised = try #require(DescriptorLimit.raise())
        #expect(raised == min(DescriptorLimit.wanted, hard))
        #expect(getrlimit(DescriptorLimit.resource, &limit) == 0)
        #expect(limit.rlim_cur == raised)
        #expect(limit.rlim_max == hard)
        // A second call changes nothing.
        #expect(DescriptorLimit.raise() == raised)
    }
}
