@testable import Reporters
import Testing

/// The plan's `needs` cell stays narrow however many tasks a task needs: every row of the table is as
/// wide as its widest cell, and a task needing 20,000 items made each row 200 kB.
@Suite struct PlanNeedsCellTests {
    @Test func pastFourNeedsTheCellNamesTheFirstFourAndCountsTheRest() {
        #expect(PlanPrinter.needsCell([]) == "-")
        #expect(PlanPrinter.needsCell(["a", "b", "c", "d"]) == "a, b, c, d")
        #expect(PlanPrinter.needsCell((0..<20_000).map { "sort[\($0)]" }) == "sort[0], sort[1], sort[2], sort[3] and 19996 more")
    }
}
