/// The file formats the codec reads and writes.
public enum ImageFormat: String, CaseIterable, Sendable {
    /// Portable Network Graphics: lossless, with alpha.
    case png
    /// JPEG (JFIF): lossy, no alpha.
    case jpeg

    /// The format a path's extension names: `.png`, `.jpg` or `.jpeg`, in any letter case.
    /// - Returns: nil for any other extension, or none.
    public init?(path: String) {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last ?? Substring(path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        switch name[name.index(after: dot)...].lowercased() {
        case "png": self = .png
        case "jpg", "jpeg": self = .jpeg
        default: return nil
        }
    }

    /// The format the first bytes of a file announce (PNG's 8-byte signature, JPEG's SOI marker).
    /// - Returns: nil when they announce neither.
    init?(signature bytes: UnsafeRawBufferPointer) {
        let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        if bytes.count >= pngSignature.count, zip(bytes, pngSignature).allSatisfy({ $0 == $1 }) {
            self = .png
        } else if bytes.count >= 3, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF {
            self = .jpeg
        } else {
            return nil
        }
    }

    /// `PNG`, `JPEG`, as people write them.
    var displayName: String { rawValue.uppercased() }
}
