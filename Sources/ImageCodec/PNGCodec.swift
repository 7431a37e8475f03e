internal import CPNG

/// PNG through libpng's simplified API (`png_image`), which handles every bit depth, palette, gamma and
/// interlacing for us and reports errors in `png_image.message` instead of `longjmp`.
///
/// Ownership: libpng's state hangs off `png_image.opaque`; `png_image_free` releases it on every path
/// (libpng frees it itself after an error, and a second free is a no-op).
enum PNGCodec {
    /// PNG_FORMAT_RGBA, spelled out: Swift does not import that macro (an OR of two other macros).
    private static let rgbaFormat = UInt32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA)
    /// The IEND chunk every complete PNG ends with: length 0, type, CRC.
    private static let endChunk: [UInt8] = [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]

    static func decode(_ bytes: UnsafeRawBufferPointer, path: String, pixelLimit: Int) throws(ImageCodecError) -> Bitmap {
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        defer { png_image_free(&image) }
        guard png_image_begin_read_from_memory(&image, bytes.baseAddress, bytes.count) != 0 else {
            throw failure(image, bytes: bytes, path: path)
        }
        let width = Int(image.width), height = Int(image.height)
        try ImageCodec.checkSize(width: width, height: height, limit: pixelLimit, path: path)
        let rowBytes = width * 4
        // The row stride is a `png_int_32`; only a raised pixel limit could let a row exceed it.
        guard rowBytes <= Int(Int32.max) else {
            throw ImageCodecError(path: path, kind: .tooLarge(width: width, height: height, limit: pixelLimit))
        }
        image.format = rgbaFormat
        var succeeded = false
        // Uninitialized: libpng writes every byte, and a zero fill would cost a pass over up to 400 MB.
        let pixels = [UInt8](unsafeUninitializedCapacity: rowBytes * height) { buffer, initialized in
            succeeded = png_image_finish_read(&image, nil, buffer.baseAddress, Int32(rowBytes), nil) != 0
            initialized = buffer.count
        }
        guard succeeded else { throw failure(image, bytes: bytes, path: path) }
        return Bitmap(uncheckedWidth: width, height: height, pixels: pixels)
    }

    static func encode(_ bitmap: Bitmap, path: String) throws(ImageCodecError) -> [UInt8] {
        // Opaque images are written as RGB: a quarter less data to compress, and smaller files.
        let isOpaque = bitmap.isOpaque
        let channels = isOpaque ? 3 : 4
        let source = isOpaque ? rgbPixels(of: bitmap) : bitmap.pixels
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        image.width = UInt32(bitmap.width)
        image.height = UInt32(bitmap.height)
        image.format = isOpaque ? UInt32(PNG_FORMAT_RGB) : rgbaFormat
        defer { png_image_free(&image) }
        guard bitmap.width <= Int(UInt32.max) / channels else {
            throw ImageCodecError(path: path, kind: .encodingFailed(detail: "a row of \(bitmap.width) pixels is too wide for PNG"))
        }
        // libpng's PNG_IMAGE_PNG_SIZE_MAX: the worst case of zlib plus every chunk, so one call always fits.
        let data = bitmap.height * (bitmap.width * channels + 1)
        let compressed = data + (data + 7) / 8 + (data + 63) / 64 + 11
        let capacity = 8 + 25 + 16 + 44 + 12 + 12 + 12 * (compressed / 8192) + compressed
        var succeeded = false
        let encoded = source.withUnsafeBytes { pixels in
            [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
                var size = capacity
                succeeded = png_image_write_to_memory(&image, buffer.baseAddress, &size, 0, pixels.baseAddress, 0, nil) != 0
                initialized = succeeded ? min(size, capacity) : 0
            }
        }
        guard succeeded else {
            throw ImageCodecError(path: path, kind: .encodingFailed(detail: "libpng: \(message(of: image))"))
        }
        return encoded
    }

    /// The RGB bytes of an opaque bitmap, for the RGB PNG encoding.
    private static func rgbPixels(of bitmap: Bitmap) -> [UInt8] {
        let count = bitmap.pixelCount
        return bitmap.pixels.withUnsafeBufferPointer { rgba in
            [UInt8](unsafeUninitializedCapacity: count * 3) { rgb, initialized in
                for pixel in 0..<count {
                    rgb[pixel * 3] = rgba[pixel * 4]
                    rgb[pixel * 3 + 1] = rgba[pixel * 4 + 1]
                    rgb[pixel * 3 + 2] = rgba[pixel * 4 + 2]
                }
                initialized = count * 3
            }
        }
    }

    /// A failed read: truncated when the data stops before the IEND chunk, else corrupt.
    private static func failure(_ image: png_image, bytes: UnsafeRawBufferPointer, path: String) -> ImageCodecError {
        let detail = "libpng: \(message(of: image))"
        let isComplete = bytes.count >= endChunk.count && bytes.suffix(endChunk.count).elementsEqual(endChunk)
        return ImageCodecError(path: path, kind: isComplete ? .corrupt(detail: detail) : .truncated(detail: detail))
    }

    /// libpng's message from the fixed `char message[64]` field.
    private static func message(of image: png_image) -> String {
        withUnsafeBytes(of: image.message) { raw in
            let text = raw.prefix { $0 != 0 }
            return text.isEmpty ? "unknown error" : String(decoding: text, as: UTF8.self)
        }
    }
}
