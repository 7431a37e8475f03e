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
            return text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }.map(ItemValue.string)
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
            throw ReadError(description: "'\(name)' is not valid JSON: \(describe(error))")
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

    /// Foundation's JSON errors carry the position in their user info; keep the readable part.
    private static func describe(_ error: Error) -> String {
        let nsError = error as NSError
        return (nsError.userInfo[NSDebugDescriptionErrorKey] as? String) ?? nsError.localizedDescription
    }
}
