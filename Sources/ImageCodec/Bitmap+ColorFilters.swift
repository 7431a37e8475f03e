extension Bitmap {
    /// The classic sepia tone (r' = .393r + .769g + .189b, g' = .349r + .686g + .168b,
    /// b' = .272r + .534g + .131b, each clamped to 255), mixed with the original; alpha is kept.
    /// - Parameter intensity: 0 (the original) … 1 (full sepia); clamped to that range.
    public consuming func sepiaToned(intensity: Double = 1) -> Bitmap {
        var result = consume self
        _ = result.applySepia(intensity: intensity, cancellation: nil)
        return result
    }

    /// Grey by Rec. 709 luma (0.2126 R + 0.7152 G + 0.0722 B of the stored, gamma-encoded values); alpha kept.
    public consuming func grayscaled() -> Bitmap {
        var result = consume self
        _ = result.applyGrayscale(cancellation: nil)
        return result
    }

    /// Each colour channel `c` becomes `255 - c`; alpha is kept.
    public consuming func inverted() -> Bitmap {
        var result = consume self
        _ = result.applyInvert(cancellation: nil)
        return result
    }

    // Fixed point with 16 fractional bits: exact enough for 8-bit results, and integer math vectorizes.
    private static let one = 1 << 16

    private static func fixed(_ value: Double) -> Int { Int((value * Double(one)).rounded()) }

    /// - Returns: false when cancelled part-way (the pixels are then partly filtered).
    mutating func applySepia(intensity: Double, cancellation: CancellationFlag?) -> Bool {
        let matrix = [0.393, 0.769, 0.189, 0.349, 0.686, 0.168, 0.272, 0.534, 0.131].map(Self.fixed)
        let (rr, rg, rb, gr, gg, gb, br, bg, bb) = (matrix[0], matrix[1], matrix[2], matrix[3], matrix[4], matrix[5],
                                                    matrix[6], matrix[7], matrix[8])
        let mix = Int((min(max(intensity.isNaN ? 1 : intensity, 0), 1) * 256).rounded())
        let keep = 256 - mix
        let half = Self.one / 2
        return forEachPixelBand(cancellation: cancellation) { pixels, range in
            for offset in range {
                let red = Int(pixels[offset]), green = Int(pixels[offset + 1]), blue = Int(pixels[offset + 2])
                let sepiaRed = min((rr * red + rg * green + rb * blue + half) >> 16, 255)
                let sepiaGreen = min((gr * red + gg * green + gb * blue + half) >> 16, 255)
                let sepiaBlue = min((br * red + bg * green + bb * blue + half) >> 16, 255)
                pixels[offset] = UInt8(truncatingIfNeeded: (sepiaRed * mix + red * keep + 128) >> 8)
                pixels[offset + 1] = UInt8(truncatingIfNeeded: (sepiaGreen * mix + green * keep + 128) >> 8)
                pixels[offset + 2] = UInt8(truncatingIfNeeded: (sepiaBlue * mix + blue * keep + 128) >> 8)
            }
        }
    }

    mutating func applyGrayscale(cancellation: CancellationFlag?) -> Bool {
        let (red, green, blue) = (Self.fixed(0.2126), Self.fixed(0.7152), Self.fixed(0.0722))
        let half = Self.one / 2
        return forEachPixelBand(cancellation: cancellation) { pixels, range in
            for offset in range {
                let luma = (red * Int(pixels[offset]) + green * Int(pixels[offset + 1]) + blue * Int(pixels[offset + 2]) + half) >> 16
                let value = UInt8(truncatingIfNeeded: min(luma, 255))
                pixels[offset] = value
                pixels[offset + 1] = value
                pixels[offset + 2] = value
            }
        }
    }

    mutating func applyInvert(cancellation: CancellationFlag?) -> Bool {
        forEachPixelBand(cancellation: cancellation) { pixels, range in
            for offset in range {
                pixels[offset] = 255 - pixels[offset]
                pixels[offset + 1] = 255 - pixels[offset + 1]
                pixels[offset + 2] = 255 - pixels[offset + 2]
            }
        }
    }

    /// Runs `body` over bands of rows on every core, passing the byte offsets of the band's pixels
    /// (a stride-4 range, one offset per pixel's red byte).
    private mutating func forEachPixelBand(cancellation: CancellationFlag?,
                                           _ body: @escaping @Sendable (UnsafeMutablePointer<UInt8>, StrideTo<Int>) -> Void) -> Bool {
        let rowBytes = width * 4
        let rows = height
        return pixels.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return true }
            let shared = SharedPointer(base)
            return RowBands.run(rows, cancellation: cancellation) { band in
                body(shared.base, stride(from: band.lowerBound * rowBytes, to: band.upperBound * rowBytes, by: 4))
            }
        }
    }
}
