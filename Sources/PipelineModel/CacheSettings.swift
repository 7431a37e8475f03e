import JobGraphBasics
import YAMLNodes

/// `remote_cache:`, a shared output cache spoken to with Bazel's HTTP cache protocol (docs/cache.md,
/// "A remote cache").
public struct RemoteCacheSpec: Sendable, Equatable {
    /// The server's base URL; action records go under `URL/ac/`, blobs under `URL/cas/`.
    public var url: String
    /// `read_only: true`: restore from the server, never upload to it.
    public var isReadOnly = false
    /// `header_env:`, each HTTP header sent with every request and the environment variable that holds its
    /// value (a bearer token): the file names the variable, never the value.
    public var headerVariables: [(header: String, variable: String)] = []

    public init(url: String, isReadOnly: Bool = false, headerVariables: [(header: String, variable: String)] = []) {
        self.url = url
        self.isReadOnly = isReadOnly
        self.headerVariables = headerVariables
    }

    public static func == (lhs: RemoteCacheSpec, rhs: RemoteCacheSpec) -> Bool {
        lhs.url == rhs.url && lhs.isReadOnly == rhs.isReadOnly
            && lhs.headerVariables.map(\.header) == rhs.headerVariables.map(\.header)
            && lhs.headerVariables.map(\.variable) == rhs.headerVariables.map(\.variable)
    }
}

extension RemoteCacheSpec {
    static let keys = KeySet(["url", "read_only", "header_env"])

    /// `remote_cache: URL` or `remote_cache: {url, read_only, header_env: {HEADER: VARIABLE}}`.
    static func decode(_ node: YAMLNode, decoder: inout NodeDecoder) -> RemoteCacheSpec? {
        if node.scalar != nil {
            return decodeURL(node, decoder: &decoder).map { RemoteCacheSpec(url: $0) }
        }
        guard let entries = decoder.mapping(node, expected: "a URL or a mapping with 'url'", for: "remote_cache") else { return nil }
        let known = decoder.knownEntries(entries, allowed: keys, in: "'remote_cache'")
        var spec = RemoteCacheSpec(url: "")
        var isValid = known.count == entries.count
        var hasURL = false
        for entry in known where entry.entry.value.scalar?.isNull != true {
            let value = entry.entry.value
            switch entry.key {
            case "url":
                hasURL = true
                if let url = decodeURL(value, decoder: &decoder) { spec.url = url } else { isValid = false }
            case "read_only":
                spec.isReadOnly = decoder.bool(value, for: "read_only") ?? false
            default:
                guard let pairs = decoder.mapping(value, expected: "a mapping of header names to environment variable names",
                                                  for: "header_env") else { isValid = false; continue }
                for pair in pairs {
                    guard let header = pair.keyText, Self.isHeaderName(header) else {
                        decoder.error("invalid HTTP header name in 'header_env'; use letters, digits and '-'", at: pair.key)
                        isValid = false
                        continue
                    }
                    guard let variable = decoder.nonEmptyText(pair.value, expected: "an environment variable name", for: header)
                    else { isValid = false; continue }
                    spec.headerVariables.append((header, variable))
                }
            }
        }
        if !hasURL && known.count == entries.count {
            decoder.error("missing 'url' in 'remote_cache'; give the cache server's address, such as 'http://cache:8080/jobgraph'", at: node)
            isValid = false
        }
        return isValid ? spec : nil
    }

    private static func decodeURL(_ node: YAMLNode, decoder: inout NodeDecoder) -> String? {
        guard let text = decoder.nonEmptyText(node, expected: "an http or https URL", for: "url") else { return nil }
        guard text.hasPrefix("http://") || text.hasPrefix("https://") else {
            decoder.error("'\(NodeDecoder.shortened(text))' is not an http or https URL", at: node)
            return nil
        }
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }

    static func isHeaderName(_ text: String) -> Bool {
        !text.isEmpty && text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-") }
    }
}
