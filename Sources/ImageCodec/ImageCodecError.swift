/// Why an image could not be read, written or filtered, and which file it was.
public struct ImageCodecError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Hashable, Sendable {
        /// The file could not be opened or read; `reason` is the system's (`No such file or directory`).
        case unreadable(reason: String)
        /// The bytes are neither a PNG nor a JPEG.
        case notAnImage
        /// The file ends before the image does; `detail` is the library's own message.
        case truncated(detail: String)
        /// The library rejected the data; `detail` is its own message.
        case corrupt(detail: String)
        /// A valid image using something the codec does not convert (a CMYK JPEG).
        case unsupportedContent(detail: String)
        /// The path's extension names no format the codec writes.
        case unsupportedFormat(extension: String)
        /// The image has more pixels than the limit allows (found in the header, before decoding).
        case tooLarge(width: Int, height: Int, limit: Int)
        /// The encoder failed; `detail` is the library's own message.
        case encodingFailed(detail: String)
        /// The work was stopped on request before it finished.
        case cancelled
    }

    /// The file as the caller named it.
    public var path: String
    /// What went wrong.
    public var kind: Kind

    /// An error about the file at `path`.
    public init(path: String, kind: Kind) {
        self.path = path
        self.kind = kind
    }

    /// One sentence naming the file and the problem, for a task's failure reason.
    public var description: String {
        switch kind {
        case .unreadable(let reason):
            "cannot read '\(path)': \(reason)"
        case .notAnImage:
            "'\(path)' is not a PNG or JPEG image"
        case .truncated(let detail):
            "'\(path)' is truncated (\(detail))"
        case .corrupt(let detail):
            "'\(path)' is corrupt (\(detail))"
        case .unsupportedContent(let detail):
            "'\(path)' uses \(detail), which is not supported"
        case .unsupportedFormat(let pathExtension):
            pathExtension.isEmpty
                ? "cannot write '\(path)': no extension; use '.png', '.jpg' or '.jpeg'"
                : "cannot write '\(path)': unsupported format '.\(pathExtension)'; use '.png', '.jpg' or '.jpeg'"
        case .tooLarge(let width, let height, let limit):
            "'\(path)' is \(width)×\(height) pixels (\(megapixels(Double(width) * Double(height)))), over the limit of \(megapixels(Double(limit)))"
        case .encodingFailed(let detail):
            "cannot encode '\(path)': \(detail)"
        case .cancelled:
            "stopped while working on '\(path)'"
        }
    }
}

/// `24 megapixels`, `2500 megapixels`, `0.3 megapixels`.
/// - Parameter pixels: a Double, as a header's width × height can overflow `Int`.
private func megapixels(_ pixels: Double) -> String {
    let millions = pixels / 1_000_000
    if millions >= 1e15 { return "\(millions) megapixels" }  // `Int(_:)` of a larger Double would trap
    if millions >= 10 || millions == millions.rounded() { return "\(Int(millions.rounded())) megapixels" }
    return "\((millions * 10).rounded() / 10) megapixels"
}
