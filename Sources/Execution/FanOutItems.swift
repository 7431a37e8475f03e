import Foundation

/// Reads the items of a `foreach: {from: FILE}` once the task's needs are done.
enum FanOutItems {
    /// Why a list could not be read, naming the file and, where it can tell, the line.
    struct ReadError: Error, CustomStringConvertible {
        var description: String
    }

    /// A JSON array of strings, numbers or flat objects, or else one item per non-empty line of text.
    static func read(_ path: String, shownAs name: String) throws(ReadError) -> [ItemValue] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ReadError(description: "cannot read the fan-out list '\(name)'")
        }
        let text = String(decoding: data, as: UTF8.self)
        guard text.drop(while: \.isWhitespace).first == "[" else {
            // Trimmed without Foundation's `CharacterSet`, which was most of reading a list (perf record,
            // no-op rerun of Benchmarks/snakemake.sh at 2,000 samples); what is left of a line after the
            // split has the same whitespace either way.
            return text.split(whereSeparator: \.isNewline).compactMap { line in
                guard let first = line.firstIndex(where: { !$0.isWhitespace }), let last = line.lastIndex(where: { !$0.isWhitespace }) else {
                    return nil
                }
                return .string(String(line[first...last]))
            }
        }
        let array: [Any]
        do {
            guard let parsed = try JSONSerialization.jsonObject(with: data) as? [Any] else {
                throw ReadError(description: "'\(name)' is not a JSON array")
            }
            array = parsed
        } catch let error as ReadError {
            throw error
        } catch {
            throw ReadError(description: describe(error, in: data, file: name))
        }
        var items: [ItemValue] = []
        for (position, element) in array.enumerated() {
            if let object = element as? [String: Any] {
                var fields: [String: String] = [:]
                for (key, value) in object {
                    guard let text = scalarText(value) else {
                        throw ReadError(description: "'\(name)': item \(position) has field '\(key)' that is not a string, number or boolean")
                    }
                    fields[key] = text
                }
                items.append(.object(fields))
            } else if let text = scalarText(element) {
                items.append(.string(text))
            } else {
                throw ReadError(description: "'\(name)': item \(position) is neither a string, a number nor an object")
            }
        }
        return items
    }

    private static func scalarText(_ value: Any) -> String? {
        switch value {
        case let string as String: return string
        case let number as NSNumber: return number.stringValue
        default: return nil
        }
    }

    /// Foundation's JSON errors carry the position in their user info as "around character N" (a 0-based
    /// byte offset); a user looks for the line, 1-based.
    private static func describe(_ error: Error, in data: Data, file name: String) -> String {
        let nsError = error as NSError
        var detail = (nsError.userInfo[NSDebugDescriptionErrorKey] as? String) ?? nsError.localizedDescription
        if detail.hasSuffix(".") { detail.removeLast() }
        if let first = detail.first { detail = first.lowercased() + detail.dropFirst() }
        guard let marker = detail.range(of: "around character "),
              let offset = Int(detail[marker.upperBound...].prefix(while: \.isNumber))
        else { return "'\(name)' is not valid JSON: \(detail)" }
        let line = data.prefix(offset).reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
        return "'\(name)', line \(line): not valid JSON (\(detail))"
    }
}
