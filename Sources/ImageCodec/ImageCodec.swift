#if canImport(Glibc)
import Glibc
#endif

/// Reads and writes PNG and JPEG images as `Bitmap`s, through libpng and libjpeg-turbo.
///
/// Every image's size is read from its header and checked against `pixelLimit` before any pixel memory
/// is allocated, so a small file declaring a huge image costs nothing. Safe from any thread; each call
/// uses its own library state.
public struct ImageCodec: Sendable {
    /// 100 megapixels: a 400 MB bitmap, larger than any camera photo.
    public static let defaultPixelLimit = 100_000_000
    /// JPEG quality when none is asked for: visually lossless for photos, at a third of quality 100's size.
    public static let defaultJPEGQuality = 90

    /// The most pixels (`width * height`) an image may have to be decoded or produced.
    public var pixelLimit: Int

    /// A codec refusing images over `pixelLimit` pixels.
    public init(pixelLimit: Int = ImageCodec.defaultPixelLimit) {
        self.pixelLimit = pixelLimit
    }

    /// Reads and decodes the image file at `path`, PNG or JPEG whatever its extension says.
    /// - Throws: `ImageCodecError` naming `path`: unreadable, not an image, truncated, corrupt or too large.
    public func decode(contentsOf path: String) throws(ImageCodecError) -> Bitmap {
        let bytes = try readFile(at: path)
        return try decode(bytes, path: path)
    }

    /// Decodes PNG or JPEG bytes, telling the format from their signature.
    /// - Parameter path: names the image in errors; nothing is read from it.
    /// - Throws: `ImageCodecError`: not an image, truncated, corrupt or too large.
    public func decode(_ bytes: [UInt8], path: String) throws(ImageCodecError) -> Bitmap {
        let result = bytes.withUnsafeBytes { buffer -> Result<Bitmap, ImageCodecError> in
            switch ImageFormat(signature: buffer) {
            case .png: Result { () throws(ImageCodecError) in try PNGCodec.decode(buffer, path: path, pixelLimit: pixelLimit) }
            case .jpeg: Result { () throws(ImageCodecError) in try JPEGCodec.decode(buffer, path: path, pixelLimit: pixelLimit) }
            case nil: .failure(ImageCodecError(path: path, kind: .notAnImage))
            }
        }
        return try result.get()
    }

    /// Encodes a bitmap in the format `path`'s extension names.
    /// - Parameters:
    ///   - path: decides the format and names the image in errors; nothing is written to it.
    ///   - quality: JPEG quality, 1…100 (clamped); ignored for PNG.
    /// - Throws: `ImageCodecError`: an unsupported extension, or the encoder's failure.
    public func encode(_ bitmap: Bitmap, for path: String, quality: Int = ImageCodec.defaultJPEGQuality) throws(ImageCodecError) -> [UInt8] {
        guard let format = ImageFormat(path: path) else {
            throw ImageCodecError(path: path, kind: .unsupportedFormat(extension: pathExtension(of: path)))
        }
        return try encode(bitmap, as: format, quality: quality, path: path)
    }

    /// Encodes a bitmap as PNG (lossless; RGB when every pixel is opaque, else RGBA) or JPEG (4:2:0, no alpha).
    /// - Parameters:
    ///   - quality: JPEG quality, 1…100 (clamped); ignored for PNG.
    ///   - path: names the image in errors; nothing is written to it.
    /// - Throws: `ImageCodecError.Kind.encodingFailed` with the library's message.
    public func encode(_ bitmap: Bitmap, as format: ImageFormat, quality: Int = ImageCodec.defaultJPEGQuality,
                       path: String) throws(ImageCodecError) -> [UInt8] {
        switch format {
        case .png: try PNGCodec.encode(bitmap, path: path)
        case .jpeg: try JPEGCodec.encode(bitmap, quality: min(max(quality, 1), 100), path: path)
        }
    }

    /// Checks a size from a header against the limit, before anything is allocated for its pixels.
    static func checkSize(width: Int, height: Int, limit: Int, path: String) throws(ImageCodecError) {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        if overflow || pixels > limit {
            throw ImageCodecError(path: path, kind: .tooLarge(width: width, height: height, limit: limit))
        }
    }

    /// The whole file, read with `read(2)` into one buffer sized by `fstat`.
    private func readFile(at path: String) throws(ImageCodecError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw unreadable(path) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw unreadable(path) }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw ImageCodecError(path: path, kind: .unreadable(reason: "not a regular file"))
        }
        let expected = Int(status.st_size)
        var failure: Int32 = 0
        var bytes = [UInt8](unsafeUninitializedCapacity: expected) { buffer, initialized in
            while initialized < expected, let base = buffer.baseAddress {
                let count = read(descriptor, base + initialized, expected - initialized)
                if count < 0 && errno == EINTR { continue }
                if count < 0 { failure = errno; break }
                if count == 0 { break }  // the file shrank since fstat: decode what is there
                initialized += count
            }
        }
        if failure != 0 { throw ImageCodecError(path: path, kind: .unreadable(reason: systemMessage(failure))) }
        // A file that grew since fstat: take the rest too, so a JPEG is not cut short of its end marker.
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw unreadable(path) }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return bytes
    }

    private func unreadable(_ path: String) -> ImageCodecError {
        ImageCodecError(path: path, kind: .unreadable(reason: systemMessage(errno)))
    }
}

/// `No such file or directory`, for an `errno` value.
func systemMessage(_ code: Int32) -> String {
    String(cString: strerror(code))
}

/// `gif` for `photos/cat.gif`; empty when the file name has no extension.
func pathExtension(of path: String) -> String {
    let name = path.split(separator: "/", omittingEmptySubsequences: false).last ?? Substring(path)
    guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
    return String(name[name.index(after: dot)...])
}
