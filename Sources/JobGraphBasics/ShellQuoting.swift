/// POSIX shell quoting.
public enum ShellQuoting {
    /// The value in single quotes, each `'` written as `'\''`; plain words are left alone.
    public static func quoted(_ value: String) -> String {
        // By byte: asked of Unicode's properties, each letter cost a table lookup, and the check was 1.4% of a
        // no-op rerun of Benchmarks/snakemake.sh's 2,000-sample workflow (perf record), every path templated.
        if !value.isEmpty && value.utf8.allSatisfy(isPlain) { return value }
        return "'" + value.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// An ASCII letter or digit, or one of `-_./:+@%,`: needs no quotes in any POSIX shell.
    private static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "+"),
             UInt8(ascii: "@"), UInt8(ascii: "%"), UInt8(ascii: ","): true
        default: false
        }
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: Character(target), omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
