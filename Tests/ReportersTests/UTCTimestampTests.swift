import Foundation
import Testing
@testable import Reporters

/// An event's `time` reads exactly as Foundation's ISO 8601 style writes it, which the events' consumers
/// (and schemas/events.schema.json) were written against.
struct UTCTimestampTests {
    static let foundationStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    @Test(arguments: [
        0, 0.0004, 0.0005, 0.9994, 0.9995, 0.9999, 1.2345, 59.999, 951_782_400.5,  // 2000-02-29
        1_700_000_000.1239, 1_700_000_000.9996, 1_795_000_000.001, 2_147_483_648.25,  // past 2038
        -0.5, -1.0004,
    ])
    func matchesFoundation(secondsSince1970: Double) {
        let date = Date(timeIntervalSince1970: secondsSince1970)
        #expect(UTCTimestamp.string(date) == date.formatted(Self.foundationStyle))
    }

    @Test func matchesFoundationAcrossAYearOfMilliseconds() {
        // A step that is no whole number of milliseconds visits every fraction and its float neighbours.
        var mismatches: [String] = []
        var seconds = 1_767_225_600.0  // 2026-01-01
        while seconds < 1_767_225_600.0 + 366 * 86_400 {
            let date = Date(timeIntervalSince1970: seconds)
            let expected = date.formatted(Self.foundationStyle)
            if UTCTimestamp.string(date) != expected { mismatches.append(expected) }
            seconds += 997.0003
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }
}
