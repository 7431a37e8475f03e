/// A decoded image: RGBA, 8 bits per channel, rows top to bottom, no padding between rows.
///
/// Colour channels are not premultiplied by alpha (as PNG and JPEG store them). A plain value:
/// filters return a new `Bitmap`, and one consumed by a filter is reused in place when no one else holds it.
public struct Bitmap: Hashable, Sendable {
    /// Pixels per row; at least 1.
    public let width: Int
    /// Rows; at least 1.
    public let height: Int
    /// `width * height * 4` bytes: R, G, B, A of the top-left pixel first.
    public internal(set) var pixels: [UInt8]

    /// Wraps existing pixels.
    /// - Returns: nil when a side is below 1 or `pixels` does not hold exactly `width * height * 4` bytes.
    public init?(width: Int, height: Int, pixels: [UInt8]) {
        guard width >= 1, height >= 1,
              case (let count, false) = width.multipliedReportingOverflow(by: height),
              case (let bytes, false) = count.multipliedReportingOverflow(by: 4),
              pixels.count == bytes else { return nil }
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// A bitmap of one colour.
    /// - Returns: nil when a side is below 1 or the size overflows.
    public init?(width: Int, height: Int, filledWith color: RGBA) {
        guard width >= 1, height >= 1,
              case (let count, false) = width.multipliedReportingOverflow(by: height),
              case (_, false) = count.multipliedReportingOverflow(by: 4) else { return nil }
        var pixels = [UInt8](repeating: 0, count: count * 4)
        for offset in stride(from: 0, to: pixels.count, by: 4) {
            pixels[offset] = color.red
            pixels[offset + 1] = color.green
            pixels[offset + 2] = color.blue
            pixels[offset + 3] = color.alpha
        }
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// For the codec and the filters, which have checked the sizes already.
    init(uncheckedWidth width: Int, height: Int, pixels: [UInt8]) {
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// Pixels in the image: `width * height`.
    public var pixelCount: Int { width * height }

    /// Whether every pixel's alpha is 255, so the filters may skip premultiplying and PNG may drop the channel.
    public var isOpaque: Bool {
        pixels.withUnsafeBufferPointer { buffer in
            var alphaAnd: UInt8 = 255
            var offset = 3
            while offset < buffer.count {
                alphaAnd &= buffer[offset]
                offset += 4
            }
            return alphaAnd == 255
        }
    }

    /// The pixel at column `x` and row `y` (both 0-based, from the top left).
    /// - Precondition: the coordinates lie inside the image (as with an array subscript).
    public subscript(x: Int, y: Int) -> RGBA {
        get {
            let offset = (y * width + x) * 4
            return RGBA(pixels[offset], pixels[offset + 1], pixels[offset + 2], pixels[offset + 3])
        }
        set {
            let offset = (y * width + x) * 4
            pixels[offset] = newValue.red
            pixels[offset + 1] = newValue.green
            pixels[offset + 2] = newValue.blue
            pixels[offset + 3] = newValue.alpha
        }
    }
}

/// One pixel's colour, 0…255 per channel, not premultiplied.
public struct RGBA: Hashable, Sendable, CustomStringConvertible {
    /// Red, 0…255.
    public var red: UInt8
    /// Green, 0…255.
    public var green: UInt8
    /// Blue, 0…255.
    public var blue: UInt8
    /// Opacity, 0 (transparent) …255 (opaque).
    public var alpha: UInt8

    /// A colour from its channels; opaque unless `alpha` says otherwise.
    public init(_ red: UInt8, _ green: UInt8, _ blue: UInt8, _ alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// `rgba(10, 20, 30, 255)`, for test failures.
    public var description: String { "rgba(\(red), \(green), \(blue), \(alpha))" }
}
