extension Bitmap {
    /// A Gaussian blur, approximated by three box blurs per axis (Kovesi's widths), so each pass costs the
    /// same whatever the radius. Edges extend their outermost pixels; transparent pixels do not bleed their
    /// colour (the blur works on premultiplied alpha).
    /// - Parameter radius: the Gaussian's standard deviation in pixels, as in CSS `blur()`; 0 or less leaves
    ///   the image as it is, and radii beyond the image's longer side act as that side.
    public consuming func blurred(radius: Double) -> Bitmap {
        var result = consume self
        _ = result.applyBlur(radius: radius, cancellation: nil)
        return result
    }

    /// A miniature-look tilt-shift: the middle third of the rows stays sharp, and the blur grows smoothly
    /// (smoothstep) from nothing at that band's edges to `radius` at the top and bottom rows.
    /// - Parameter radius: the strongest blur's standard deviation, in pixels.
    public consuming func tiltShifted(radius: Double) -> Bitmap {
        var result = consume self
        _ = result.applyTiltShift(radius: radius, cancellation: nil)
        return result
    }

    /// Columns per vertical band: 64 pixels of 4 Floats is 1 KB per row, so walking down the rows touches a
    /// new page (and TLB entry) only every 256 bytes of the image, while a band's buffers still fit in L2.
    private static let stripeWidth = 64

    /// - Returns: false when cancelled part-way.
    mutating func applyBlur(radius: Double, cancellation: CancellationFlag?) -> Bool {
        guard radius.isFinite, radius > 0 else { return !(cancellation?.isCancelled ?? false) }
        // A Gaussian wider than the image already averages it all; capping keeps the box sums' start-up short.
        let radii = Self.boxRadii(sigma: min(radius, Double(max(width, height))))
        let premultiplied = !isOpaque
        let width = width, height = height
        let stripes = (width + Self.stripeWidth - 1) / Self.stripeWidth
        return pixels.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return true }
            let shared = SharedPointer(base)
            // Rows: each row is one line of single pixels. Columns: a stripe's rows are its lines.
            let horizontal = RowBands.run(height, cancellation: cancellation) { rows in
                for row in rows {
                    Self.blurLines(shared.base + row * width * 4, lineCount: width, lineWidth: 1, lineStride: 4,
                                   radii: radii, premultiplying: premultiplied, unpremultiplying: false)
                }
            }
            guard horizontal else { return false }
            return RowBands.run(stripes, minimum: 1, cancellation: cancellation) { stripeRange in
                for stripe in stripeRange {
                    let firstColumn = stripe * Self.stripeWidth
                    Self.blurLines(shared.base + firstColumn * 4, lineCount: height,
                                   lineWidth: min(Self.stripeWidth, width - firstColumn), lineStride: width * 4,
                                   radii: radii, premultiplying: false, unpremultiplying: premultiplied)
                }
            }
        }
    }

    mutating func applyTiltShift(radius: Double, cancellation: CancellationFlag?) -> Bool {
        // Blending towards two blur levels (half and full radius) keeps the growth smooth: a blend of sharp and
        // fully blurred alone would look like a double exposure in between.
        var halfBlurred = self, fullyBlurred = self
        guard halfBlurred.applyBlur(radius: radius / 2, cancellation: cancellation),
              fullyBlurred.applyBlur(radius: radius, cancellation: cancellation) else { return false }
        let width = width, height = height
        let bandTop = Double(height) / 3, bandBottom = Double(height) * 2 / 3
        return pixels.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return true }
            let sharp = SharedPointer(base)
            return halfBlurred.pixels.withUnsafeMutableBufferPointer { halfBuffer in
                fullyBlurred.pixels.withUnsafeMutableBufferPointer { fullBuffer in
                    guard let halfBase = halfBuffer.baseAddress, let fullBase = fullBuffer.baseAddress else { return true }
                    let half = SharedPointer(halfBase), full = SharedPointer(fullBase)
                    return RowBands.run(height, cancellation: cancellation) { rows in
                        for row in rows {
                            let center = Double(row) + 0.5
                            let distance = center < bandTop ? (bandTop - center) / bandTop
                                : center > bandBottom ? (center - bandBottom) / (Double(height) - bandBottom) : 0
                            let eased = distance * distance * (3 - 2 * distance)
                            // 0…512 in 1/256 steps: up to 256 blends sharp into half, beyond it half into full.
                            let level = Int((eased * 512).rounded())
                            guard level > 0 else { continue }
                            let (from, to, weight) = level <= 256 ? (sharp.base, half.base, level) : (half.base, full.base, level - 256)
                            let start = row * width * 4
                            for offset in start ..< start + width * 4 {
                                let a = Int(from[offset]), b = Int(to[offset])
                                sharp.base[offset] = UInt8(truncatingIfNeeded: a + (((b - a) * weight + 128) >> 8))
                            }
                        }
                    }
                }
            }
        }
    }

    /// Three box widths whose succession approximates a Gaussian of `sigma` (Kovesi, "Fast almost-Gaussian
    /// filtering", 2010), as box radii: a box of radius r averages 2r + 1 pixels.
    static func boxRadii(sigma: Double) -> [Int] {
        let passes = 3.0
        let ideal = (12 * sigma * sigma / passes + 1).squareRoot()
        var lower = Int(ideal.rounded(.down))
        if lower % 2 == 0 { lower -= 1 }
        lower = max(lower, 1)
        let upper = lower + 2
        let lowerCount = ((12 * sigma * sigma - passes * Double(lower * lower) - 4 * passes * Double(lower) - 3 * passes)
            / Double(-4 * lower - 4)).rounded()
        return (0..<3).map { pass in (Double(pass) < lowerCount ? lower : upper) / 2 }
    }

    /// Blurs `lineCount` lines of `lineWidth` pixels each (lines `lineStride` bytes apart) along the lines'
    /// direction: a row of single pixels for the horizontal passes, a stripe of columns for the vertical ones.
    private static func blurLines(_ pixels: UnsafeMutablePointer<UInt8>, lineCount: Int, lineWidth: Int, lineStride: Int,
                                  radii: [Int], premultiplying: Bool, unpremultiplying: Bool) {
        let count = lineCount * lineWidth
        // Float working copies: one rounding at the end instead of one per pass.
        let first = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: count)
        let second = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: count)
        let sums = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: lineWidth)
        defer {
            first.deallocate()
            second.deallocate()
            sums.deallocate()
        }
        for line in 0..<lineCount {
            let source = pixels + line * lineStride
            for column in 0..<lineWidth {
                var value = loadFloats(at: source + column * 4)
                if premultiplying {
                    let alpha = value[3] / 255
                    value *= SIMD4(alpha, alpha, alpha, 1)
                }
                first[line * lineWidth + column] = value
            }
        }
        var source = first, destination = second
        for radius in radii where radius > 0 {
            boxPass(from: source, to: destination, lineCount: lineCount, lineWidth: lineWidth, radius: radius, sums: sums)
            swap(&source, &destination)
        }
        for line in 0..<lineCount {
            let target = pixels + line * lineStride
            for column in 0..<lineWidth {
                var value = source[line * lineWidth + column]
                if unpremultiplying {
                    let alpha = value[3]
                    let scale: Float = alpha > 0.5 ? 255 / alpha : 0
                    value *= SIMD4(scale, scale, scale, 1)
                }
                storeRounded(value, at: target + column * 4)
            }
        }
    }

    /// One box blur along the lines with a running sum: O(1) per pixel whatever the radius.
    private static func boxPass(from source: UnsafeMutablePointer<SIMD4<Float>>, to destination: UnsafeMutablePointer<SIMD4<Float>>,
                                lineCount: Int, lineWidth: Int, radius: Int, sums: UnsafeMutablePointer<SIMD4<Float>>) {
        if lineWidth == 1 {
            boxPass(from: source, to: destination, count: lineCount, radius: radius)
        } else {
            boxPassOverLines(from: source, to: destination, lineCount: lineCount, lineWidth: lineWidth, radius: radius, sums: sums)
        }
    }

    /// `boxPass` along one row: the running sum stays in a register.
    private static func boxPass(from source: UnsafeMutablePointer<SIMD4<Float>>, to destination: UnsafeMutablePointer<SIMD4<Float>>,
                                count: Int, radius: Int) {
        let last = count - 1
        let scale = 1 / Float(2 * radius + 1)
        var sum = source[0] * Float(radius + 1)
        for index in 1...radius { sum += source[min(index, last)] }
        // Inside the row no index needs clamping; only the ends do.
        let clampedUntil = min(radius, count), clampedFrom = max(clampedUntil, count - radius - 1)
        for index in 0..<clampedUntil {
            destination[index] = sum * scale
            sum += source[min(index + radius + 1, last)] - source[max(index - radius, 0)]
        }
        for index in clampedUntil..<clampedFrom {
            destination[index] = sum * scale
            sum += source[index + radius + 1] - source[index - radius]
        }
        for index in clampedFrom..<count {
            destination[index] = sum * scale
            sum += source[min(index + radius + 1, last)] - source[max(index - radius, 0)]
        }
    }

    private static func boxPassOverLines(from source: UnsafeMutablePointer<SIMD4<Float>>, to destination: UnsafeMutablePointer<SIMD4<Float>>,
                                lineCount: Int, lineWidth: Int, radius: Int, sums: UnsafeMutablePointer<SIMD4<Float>>) {
        let last = lineCount - 1
        let scale = 1 / Float(2 * radius + 1)
        // The window starts centred on line 0, with the first line repeated over the edge.
        for column in 0..<lineWidth { sums[column] = source[column] * Float(radius + 1) }
        for line in 1...radius {
            let added = source + min(line, last) * lineWidth
            for column in 0..<lineWidth { sums[column] += added[column] }
        }
        for line in 0..<lineCount {
            let output = destination + line * lineWidth
            let entering = source + min(line + radius + 1, last) * lineWidth
            let leaving = source + max(line - radius, 0) * lineWidth
            for column in 0..<lineWidth {
                output[column] = sums[column] * scale
                sums[column] += entering[column] - leaving[column]
            }
        }
    }
}
