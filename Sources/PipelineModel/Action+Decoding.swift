import JobGraphBasics
import YAMLNodes

extension Action {
    /// The action keys, in the order messages list them; a task has exactly one.
    static let keywords = ["run", "parallel", "download", "filter"]

    /// Decodes the value of one action key (`run`, `parallel`, `download` or `filter`).
    ///
    /// - Parameter owner: how messages name the mapping holding it: `task 'x'` or `'defaults'`.
    static func decode(
        keyword: String, value: YAMLNode, owner: @autoclosure () -> String, item: ItemScope, decoder: inout NodeDecoder
    ) -> Action? {
        switch keyword {
        case "run":
            let expected = "a shell command or a list of commands"
            return decoder.templateList(value, expected: expected, for: "run", item: item, allowsEmpty: false).map(Action.run)
        case "parallel":
            let expected = "a list of shell commands"
            return decoder.templateList(value, expected: expected, for: "parallel", item: item, allowsEmpty: false).map(Action.parallel)
        case "download":
            return DownloadSpec.decode(value, owner: "'download' of \(owner())", item: item, decoder: &decoder).map(Action.download)
        default:
            return FilterSpec.decode(value, owner: "'filter' of \(owner())", item: item, decoder: &decoder).map(Action.filter)
        }
    }
}

extension DownloadSpec {
    static let keys = KeySet(["url", "to", "sha256", "max_bytes"])

    static func decode(_ node: YAMLNode, owner: String, item: ItemScope, decoder: inout NodeDecoder) -> DownloadSpec? {
        guard let entries = decoder.mapping(node, expected: "a mapping with 'url' and 'to'", for: "download") else { return nil }
        var isValid = true
        var url: Template?, destination: Template?, sha256: String?, maxBytes: Int?
        var urlNode: YAMLNode?
        let known = decoder.knownEntries(entries, allowed: keys, in: owner)
        if known.count != entries.count { isValid = false }
        for (key, value) in known.map({ ($0.key, $0.entry.value) }) {
            switch key {
            case "url":
                url = decoder.nonEmptyTemplate(value, expected: "a URL", for: key, item: item)
                urlNode = value
                if url == nil { isValid = false }
            case "to":
                destination = decoder.nonEmptyTemplate(value, expected: "a path", for: key, item: item)
                if destination == nil { isValid = false }
            case "sha256":
                guard value.scalar?.isNull != true else { continue }
                sha256 = decoder.text(value, expected: "64 hexadecimal digits", for: key).flatMap { text in
                    let digits = text.lowercased()
                    if digits.count == 64, digits.allSatisfy(\.isHexDigit) { return digits }
                    decoder.error("invalid sha256 '\(NodeDecoder.shortened(text))' for 'sha256'; expected 64 hexadecimal digits", at: value)
                    return nil
                }
                if sha256 == nil { isValid = false }
            default:
                guard value.scalar?.isNull != true else { continue }
                maxBytes = decoder.integer(value, for: key, in: 1...Int.max)
                if maxBytes == nil { isValid = false }
            }
        }
        if let url, let urlNode, let problem = schemeProblem(url) {
            decoder.error(problem, at: urlNode)
            isValid = false
        }
        if !known.contains(where: { $0.key == "url" }) {
            decoder.error("missing 'url' in \(owner)", at: node)
            isValid = false
        }
        if !known.contains(where: { $0.key == "to" }) {
            decoder.error("missing 'to' in \(owner); give the path to save the download at", at: node)
            isValid = false
        }
        guard isValid, let url, let destination else { return nil }
        return DownloadSpec(url: url, destination: destination, sha256: sha256, maxBytes: maxBytes)
    }

    /// Downloads speak HTTP only; checked where the URL's start is written literally.
    private static func schemeProblem(_ url: Template) -> String? {
        guard case .literal(let start)? = url.segments.first else { return nil }
        let lowered = start.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") { return nil }
        guard url.isLiteral || start.contains("://") else { return nil }
        return "unsupported URL '\(NodeDecoder.shortened(url.description))' for 'url'; expected an 'http://' or 'https://' URL"
    }
}

extension FilterSpec {
    static let keys = KeySet(["input", "output", "effect", "intensity", "radius", "width", "height", "quality"])

    static func decode(_ node: YAMLNode, owner: String, item: ItemScope, decoder: inout NodeDecoder) -> FilterSpec? {
        guard let entries = decoder.mapping(node, expected: "a mapping with 'input', 'output' and 'effect'", for: "filter") else {
            return nil
        }
        var isValid = true
        var input: Template?, output: Template?, effect: Effect?
        var intensity: Double?, radius: Double?, width: Int?, height: Int?, quality: Int?
        var outputNode: YAMLNode?
        let known = decoder.knownEntries(entries, allowed: keys, in: owner)
        if known.count != entries.count { isValid = false }
        let keysGiven = Set(known.map(\.key))
        var parameterKeys: [(key: String, node: YAMLNode)] = []
        for known in known {
            let key = known.key, value = known.entry.value
            switch key {
            case "input":
                input = decoder.nonEmptyTemplate(value, expected: "a path", for: key, item: item)
                if input == nil { isValid = false }
            case "output":
                output = decoder.nonEmptyTemplate(value, expected: "a path", for: key, item: item)
                outputNode = value
                if output == nil { isValid = false }
            case "effect":
                effect = decoder.choice(value, for: key, noun: "effect")
                if effect == nil { isValid = false }
            default:
                guard value.scalar?.isNull != true else { continue }
                parameterKeys.append((key, known.entry.key))
                let decoded: Bool
                switch key {
                case "intensity":
                    intensity = decoder.number(value, for: key, in: 0...1)
                    decoded = intensity != nil
                case "radius":
                    radius = decoder.number(value, for: key, above: 0)
                    decoded = radius != nil
                case "width":
                    width = decoder.integer(value, for: key, in: 1...65_535)  // JPEG's largest side; larger overflowed the resize's buffer size
                    decoded = width != nil
                case "height":
                    height = decoder.integer(value, for: key, in: 1...65_535)  // JPEG's largest side; larger overflowed the resize's buffer size
                    decoded = height != nil
                default:
                    quality = decoder.integer(value, for: key, in: 1...100)
                    decoded = quality != nil
                }
                if !decoded { isValid = false }
            }
        }
        for required in ["input", "output"] where !keysGiven.contains(required) {
            decoder.error("missing '\(required)' in \(owner)", at: node)
            isValid = false
        }
        if let effect {
            for (key, keyNode) in parameterKeys where key != "quality" && !effect.parameters.contains(key) {
                let takes = effect.parameters.isEmpty ? "which takes no parameters" : "which takes \(Suggestion.list(effect.parameters))"
                decoder.error("'\(key)' does not apply to effect '\(effect.rawValue)', \(takes)", at: keyNode)
                isValid = false
            }
            if effect == .resize, !parameterKeys.contains(where: { $0.key == "width" || $0.key == "height" }) {
                decoder.error("effect 'resize' needs 'width' or 'height' (or both)", at: node)
                isValid = false
            }
        } else if !keysGiven.contains("effect") {
            decoder.error("missing 'effect' in \(owner); expected \(Suggestion.list(Effect.allCases.map(\.rawValue)))", at: node)
            isValid = false
        }
        if let output, let outputNode {
            switch imageFormat(of: output) {
            case .unsupported(let name):
                decoder.error(
                    "unsupported output format '\(NodeDecoder.shortened(name))'; 'filter' writes PNG or JPEG, so end the path in '.png', '.jpg' or '.jpeg'",
                    at: outputNode)
                isValid = false
            case .png where quality != nil:
                if let qualityKey = parameterKeys.first(where: { $0.key == "quality" }) {
                    decoder.error("'quality' applies only to JPEG output, and 'output' is a PNG file", at: qualityKey.node)
                }
                isValid = false
            default:
                break
            }
        }
        guard isValid, let input, let output, let effect else { return nil }
        return FilterSpec(
            input: input, output: output, effect: effect, intensity: intensity, radius: radius,
            width: width, height: height, quality: quality)
    }

    private enum ImageFormat {
        case png, jpeg, unknown
        case unsupported(String)
    }

    /// The output's format by its extension, where the end of the path is written literally.
    private static func imageFormat(of output: Template) -> ImageFormat {
        guard case .literal(let end)? = output.segments.last else { return .unknown }
        let name = end.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? end
        guard let dot = name.lastIndex(of: ".") else {
            return output.segments.count == 1 ? .unsupported(output.description) : .unknown
        }
        switch name[name.index(after: dot)...].lowercased() {
        case "png": return .png
        case "jpg", "jpeg": return .jpeg
        default: return .unsupported(output.description)
        }
    }
}

extension FilterSpec.Effect {
    /// The parameters this effect reads, besides `quality` (which every effect's JPEG output takes).
    var parameters: [String] {
        switch self {
        case .sepia: ["intensity"]
        case .grayscale, .invert: []
        case .blur, .tiltShift: ["radius"]
        case .resize: ["width", "height"]
        }
    }
}
