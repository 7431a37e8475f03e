/// POSIX shell quoting.
public enum ShellQuoting {
    /// The value in single quotes, each `'` written as `'\''`; plain words are left alone.
    public static func quoted(_ value: String) -> String {
        let safe = !value.isEmpty && value.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-_./:+@%,".unicodeScalars.contains(scalar))
        }
        if safe { return value }
        return "'" + value.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: Character(target), omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
