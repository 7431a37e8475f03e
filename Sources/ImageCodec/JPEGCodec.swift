internal import CTurboJPEG

/// JPEG through libjpeg-turbo's TurboJPEG 2.x API (`tj*`), which decodes straight to RGBA with SIMD
/// colour conversion and reports errors as return codes with a per-handle message.
enum JPEGCodec {
    static func decode(_ bytes: UnsafeRawBufferPointer, path: String, pixelLimit: Int) throws(ImageCodecError) -> Bitmap {
        let handle = try TurboJPEGHandle(decompressing: path)
        guard let source = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw ImageCodecError(path: path, kind: .notAnImage)
        }
        let size = UInt(bytes.count)
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        guard tjDecompressHeader3(handle.raw, source, size, &width, &height, &subsampling, &colorspace) == 0 else {
            throw failure(handle, bytes: bytes, path: path)
        }
        try ImageCodec.checkSize(width: Int(width), height: Int(height), limit: pixelLimit, path: path)
        if colorspace == Int32(TJCS_CMYK.rawValue) || colorspace == Int32(TJCS_YCCK.rawValue) {
            throw ImageCodecError(path: path, kind: .unsupportedContent(detail: "CMYK colour"))
        }
        let rowBytes = Int(width) * 4
        guard rowBytes <= Int(Int32.max) else {
            throw ImageCodecError(path: path, kind: .tooLarge(width: Int(width), height: Int(height), limit: pixelLimit))
        }
        var status: Int32 = 0
        // Uninitialized: the decoder writes every byte (filling missing data grey), so no zero fill pass.
        let pixels = [UInt8](unsafeUninitializedCapacity: rowBytes * Int(height)) { buffer, initialized in
            status = tjDecompress2(handle.raw, source, size, buffer.baseAddress, width, Int32(rowBytes), height,
                                   Int32(TJPF_RGBA.rawValue), 0)
            initialized = buffer.count
        }
        // A warning leaves a complete image behind. libjpeg's recovery from damaged data is what every viewer
        // shows, so such images pass; a file cut short does not, since its lower part is grey filler.
        if status != 0 && (!handle.lastErrorIsWarning || !endsWithEndMarker(bytes) || handle.message.hasPrefix("Premature end")) {
            throw failure(handle, bytes: bytes, path: path)
        }
        return Bitmap(uncheckedWidth: Int(width), height: Int(height), pixels: pixels)
    }

    static func encode(_ bitmap: Bitmap, quality: Int, path: String) throws(ImageCodecError) -> [UInt8] {
        guard bitmap.width <= Int(Int32.max) / 4, bitmap.height <= Int(Int32.max) else {
            throw ImageCodecError(path: path, kind: .encodingFailed(detail: "\(bitmap.width)×\(bitmap.height) is too large for JPEG"))
        }
        let handle = try TurboJPEGHandle(compressingTo: path)
        let width = Int32(bitmap.width), height = Int32(bitmap.height)
        // 4:2:0 like cjpeg and libvips: the eye barely sees chroma detail, and it halves the work.
        let subsampling = Int32(TJSAMP_420.rawValue)
        let capacity = Int(tjBufSize(width, height, subsampling))
        guard capacity > 0 else {
            throw ImageCodecError(path: path, kind: .encodingFailed(detail: "libjpeg-turbo: \(handle.message)"))
        }
        var status: Int32 = 0
        // Our own buffer of tjBufSize's worst case, with TJFLAG_NOREALLOC, so the encoder never swaps in its
        // own allocation and nothing needs tjFree or copying.
        let encoded = bitmap.pixels.withUnsafeBufferPointer { pixels in
            [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
                var destination = buffer.baseAddress
                var size = UInt(capacity)
                status = tjCompress2(handle.raw, pixels.baseAddress, width, width * 4, height, Int32(TJPF_RGBA.rawValue),
                                     &destination, &size, subsampling, Int32(quality), TJFLAG_NOREALLOC)
                initialized = status == 0 && destination == buffer.baseAddress ? min(Int(size), capacity) : 0
            }
        }
        guard status == 0, !encoded.isEmpty else {
            throw ImageCodecError(path: path, kind: .encodingFailed(detail: "libjpeg-turbo: \(handle.message)"))
        }
        return encoded
    }

    /// Whether the data ends with the EOI marker (FF D9), allowing for trailing padding some writers add.
    private static func endsWithEndMarker(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var end = bytes.count
        while end > 2, bytes[end - 1] == 0 { end -= 1 }
        return end >= 2 && bytes[end - 2] == 0xFF && bytes[end - 1] == 0xD9
    }

    private static func failure(_ handle: TurboJPEGHandle, bytes: UnsafeRawBufferPointer, path: String) -> ImageCodecError {
        let detail = "libjpeg-turbo: \(handle.message)"
        return ImageCodecError(path: path, kind: endsWithEndMarker(bytes) ? .corrupt(detail: detail) : .truncated(detail: detail))
    }
}

/// One TurboJPEG instance; owns the handle from `tjInit*` and destroys it in `deinit`, so every early
/// `throw` frees it. Used by one thread at a time (TurboJPEG handles are not thread-safe).
private final class TurboJPEGHandle {
    let raw: tjhandle

    init(decompressing path: String) throws(ImageCodecError) {
        guard let handle = tjInitDecompress() else { throw Self.initFailure(path) }
        raw = handle
    }

    init(compressingTo path: String) throws(ImageCodecError) {
        guard let handle = tjInitCompress() else { throw Self.initFailure(path) }
        raw = handle
    }

    deinit { tjDestroy(raw) }

    /// The message of the last failed call on this handle.
    var message: String {
        guard let text = tjGetErrorStr2(raw) else { return "unknown error" }
        return String(cString: text)
    }

    /// Whether the last failure was a warning (the image was still produced) rather than fatal.
    var lastErrorIsWarning: Bool { tjGetErrorCode(raw) == Int32(TJERR_WARNING.rawValue) }

    private static func initFailure(_ path: String) -> ImageCodecError {
        let detail = tjGetErrorStr2(nil).map { String(cString: $0) } ?? "cannot start libjpeg-turbo"
        return ImageCodecError(path: path, kind: .encodingFailed(detail: detail))
    }
}
