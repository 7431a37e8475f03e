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

    // Integer math with wrapping operators: nothing can overflow (the bounds are in the comments), and without
    // overflow checks the loops compile to straight-line code. (Swift's SIMD Float<->Int conversions go through
    // generic code, ten times slower; baseline x86-64 has no 32-bit integer vector multiply to gain from.)

    /// - Returns: false when cancelled part-way (the pixels are then partly filtered).
    mutating func applySepia(intensity: Double, cancellation: CancellationFlag?) -> Bool {
        // Coefficients with 16 fractional bits; a row sums to at most 1.351 · 2^16, so · 255 stays below 2^25.
        func fixed(_ value: Double) -> Int { Int((value * 65536).rounded()) }
        let (rr, rg, rb) = (fixed(0.393), fixed(0.769), fixed(0.189))
        let (gr, gg, gb) = (fixed(0.349), fixed(0.686), fixed(0.168))
        let (br, bg, bb) = (fixed(0.272), fixed(0.534), fixed(0.131))
        // The mix in 1/4096 steps, applied before rounding so the result is rounded once.
        let mix = Int((min(max(intensity.isNaN ? 1 : intensity, 0), 1) * 4096).rounded())
        let keep = 4096 - mix
        let ceiling = 255 << 16
        return forEachPixelBand(cancellation: cancellation) { pixels, count in
            for offset in stride(from: 0, to: count * 4, by: 4) {
                let red = Int(pixels[offset]), green = Int(pixels[offset + 1]), blue = Int(pixels[offset + 2])
                let tonedRed = min(rr &* red &+ rg &* green &+ rb &* blue, ceiling)
                let tonedGreen = min(gr &* red &+ gg &* green &+ gb &* blue, ceiling)
                let tonedBlue = min(br &* red &+ bg &* green &+ bb &* blue, ceiling)
                // Below 2^25 · 2^12 = 2^37, then back to 0…255 rounded.
                pixels[offset] = UInt8(truncatingIfNeeded: (tonedRed &* mix &+ (red << 16) &* keep &+ (1 << 27)) >> 28)
                pixels[offset + 1] = UInt8(truncatingIfNeeded: (tonedGreen &* mix &+ (green << 16) &* keep &+ (1 << 27)) >> 28)
                pixels[offset + 2] = UInt8(truncatingIfNeeded: (tonedBlue &* mix &+ (blue << 16) &* keep &+ (1 << 27)) >> 28)
            }
        }
    }

    mutating func applyGrayscale(cancellation: CancellationFlag?) -> Bool {
        // Rec. 709 weights with 16 fractional bits, summing to exactly 2^16 so white stays 255.
        let (red, green, blue) = (13933, 46871, 4732)
        return forEachPixelBand(cancellation: cancellation) { pixels, count in
            for offset in stride(from: 0, to: count * 4, by: 4) {
                let luma = (red &* Int(pixels[offset]) &+ green &* Int(pixels[offset + 1]) &+ blue &* Int(pixels[offset + 2]) &+ 32768) >> 16
                let value = UInt8(truncatingIfNeeded: luma)
                pixels[offset] = value
                pixels[offset + 1] = value
                pixels[offset + 2] = value
            }
        }
    }

    mutating func applyInvert(cancellation: CancellationFlag?) -> Bool {
        forEachPixelBand(cancellation: cancellation) { pixels, count in
            // One XOR per pixel flips R, G and B (bytes 0…2 in memory) and keeps alpha (byte 3).
            let words = UnsafeMutableRawPointer(pixels).assumingMemoryBound(to: UInt32.self)
            let colours = UInt32(0x00FF_FFFF).littleEndian
            for index in 0..<count { words[index] ^= colours }
        }
    }

    /// Runs `body` over bands of rows on every core, passing the band's first pixel and its pixel count.
    private mutating func forEachPixelBand(cancellation: CancellationFlag?,
                                           _ body: @escaping @Sendable (UnsafeMutablePointer<UInt8>, Int) -> Void) -> Bool {
        let rowBytes = width * 4
        let rows = height
        return pixels.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return true }
            let shared = SharedPointer(base)
            return RowBands.run(rows, cancellation: cancellation) { band in
                body(shared.base + band.lowerBound * rowBytes, band.count * rowBytes / 4)
            }
        }
    }
}

