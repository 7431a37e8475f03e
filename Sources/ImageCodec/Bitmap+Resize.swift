#if canImport(Glibc)
import Glibc
#endif

extension Bitmap {
    /// The image resampled to a new size with a separable Lanczos-3 filter; when shrinking, the filter is
    /// widened by the scale factor so every source pixel counts (area coverage, no aliasing). Transparent
    /// pixels do not bleed their colour (the resampling works on premultiplied alpha).
    /// - Parameters:
    ///   - width: pixels per row of the result; nil keeps the aspect ratio from `height`.
    ///   - height: rows of the result; nil keeps the aspect ratio from `width`.
    /// - Returns: the same image when both are nil or already match.
    public func resized(width: Int?, height: Int?) -> Bitmap {
        resized(width: width, height: height, cancellation: nil) ?? self
    }

    /// The size `resized(width:height:)` produces: the given sides, the missing one in proportion (rounded,
    /// at least 1 pixel), or the current size when neither is given.
    public func resizedSize(width: Int?, height: Int?) -> (width: Int, height: Int) {
        func proportional(_ given: Int, of side: Int, to other: Int) -> Int {
            let exact = (Double(other) * Double(given) / Double(side)).rounded()
            // Double(Int.max) is 2^63, just past Int's range: larger sizes saturate instead of trapping.
            return exact >= Double(Int.max) ? Int.max : max(1, Int(exact))
        }
        switch (width, height) {
        case let (width?, height?): return (max(1, width), max(1, height))
        case let (width?, nil): return (max(1, width), proportional(max(1, width), of: self.width, to: self.height))
        case let (nil, height?): return (proportional(max(1, height), of: self.height, to: self.width), max(1, height))
        case (nil, nil): return (self.width, self.height)
        }
    }

    /// - Returns: nil when cancelled part-way.
    func resized(width: Int?, height: Int?, cancellation: CancellationFlag?) -> Bitmap? {
        let target = resizedSize(width: width, height: height)
        if target == (self.width, self.height) { return self }
        let horizontal = ResampleKernel(from: self.width, to: target.width)
        let vertical = ResampleKernel(from: self.height, to: target.height)
        let premultiplied = !isOpaque
        let sourceWidth = self.width, sourceHeight = self.height
        let (targetWidth, targetHeight) = target
        // Rows first, into an 8-bit image `targetWidth` wide and `sourceHeight` tall (as Pillow does):
        // a quarter of a Float copy's memory, and the rounding costs well under one level.
        var succeeded = true
        let narrowed = [UInt8](unsafeUninitializedCapacity: targetWidth * sourceHeight * 4) { output, initialized in
            initialized = output.count
            guard let outputBase = output.baseAddress else { return }
            let destination = SharedPointer(outputBase)
            succeeded = pixels.withUnsafeBufferPointer { input in
                guard let inputBase = input.baseAddress else { return true }
                let source = SharedPointer(UnsafeMutablePointer(mutating: inputBase))
                return RowBands.run(sourceHeight, cancellation: cancellation) { rows in
                    for row in rows {
                        horizontal.resampleRow(source.base + row * sourceWidth * 4, into: destination.base + row * targetWidth * 4,
                                               premultiplying: premultiplied)
                    }
                }
            }
        }
        guard succeeded else { return nil }
        let result = [UInt8](unsafeUninitializedCapacity: targetWidth * targetHeight * 4) { output, initialized in
            initialized = output.count
            guard let outputBase = output.baseAddress else { return }
            let destination = SharedPointer(outputBase)
            succeeded = narrowed.withUnsafeBufferPointer { input in
                guard let inputBase = input.baseAddress else { return true }
                let source = SharedPointer(UnsafeMutablePointer(mutating: inputBase))
                return RowBands.run(targetHeight, cancellation: cancellation) { rows in
                    vertical.resampleColumns(source.base, rowBytes: targetWidth * 4, rows: rows, into: destination.base,
                                             unpremultiplying: premultiplied)
                }
            }
        }
        guard succeeded else { return nil }
        return Bitmap(uncheckedWidth: targetWidth, height: targetHeight, pixels: result)
    }
}

/// The Lanczos-3 weights that make each output pixel of one axis from its input pixels, computed once per
/// axis: for output `i`, input pixels `starts[i] ..< starts[i] + counts[i]` with weights summing to 1.
struct ResampleKernel: Sendable {
    private let taps: Int
    private let starts: [Int]
    private let counts: [Int]
    /// `taps` weights per output pixel, the unused ones 0.
    private let weights: [Float]

    init(from inputSize: Int, to outputSize: Int) {
        let scale = Double(inputSize) / Double(outputSize)
        // Shrinking stretches the kernel over `scale` input pixels per output pixel: an area average.
        let stretch = max(scale, 1)
        let support = 3 * stretch
        // The window below spans floor(c - support) ..< ceil(c + support): at most 2 * support + 2 pixels.
        let taps = min(inputSize, Int(support.rounded(.up)) * 2 + 2)
        var starts = [Int](repeating: 0, count: outputSize)
        var counts = [Int](repeating: 0, count: outputSize)
        var weights = [Float](repeating: 0, count: outputSize * taps)
        for output in 0..<outputSize {
            let center = (Double(output) + 0.5) * scale
            let first = max(0, Int((center - support).rounded(.down)))
            let end = min(inputSize, Int((center + support).rounded(.up)), first + taps)
            var raw = (first..<end).map { input in lanczos3((Double(input) + 0.5 - center) / stretch) }
            var total = raw.reduce(0, +)
            if total == 0 {
                // Only when the window misses every lobe, which a window around the centre cannot; stay safe.
                raw = raw.map { _ in 1 }
                total = Double(raw.count)
            }
            starts[output] = first
            counts[output] = raw.count
            for (index, weight) in raw.enumerated() { weights[output * taps + index] = Float(weight / total) }
        }
        self.taps = taps
        self.starts = starts
        self.counts = counts
        self.weights = weights
    }

    /// Resamples one row of RGBA pixels along this kernel's axis.
    func resampleRow(_ source: UnsafeMutablePointer<UInt8>, into destination: UnsafeMutablePointer<UInt8>, premultiplying: Bool) {
        weights.withUnsafeBufferPointer { weights in
            guard let weights = weights.baseAddress else { return }
            for output in 0..<starts.count {
                let pixels = source + starts[output] &* 4
                let pixelWeights = weights + output &* taps
                let count = counts[output]
                // Two sums, even and odd taps: one sum would wait on each addition's latency in turn.
                var even = SIMD4<Float>.zero, odd = SIMD4<Float>.zero
                var tap = 0
                if premultiplying {
                    while tap < count {
                        let value = loadFloats(at: pixels + tap &* 4)
                        let alpha = value[3] / 255
                        even += value * SIMD4(alpha, alpha, alpha, 1) * pixelWeights[tap]
                        tap &+= 1
                    }
                } else {
                    while tap &+ 1 < count {
                        even += loadFloats(at: pixels + tap &* 4) * pixelWeights[tap]
                        odd += loadFloats(at: pixels + (tap &+ 1) &* 4) * pixelWeights[tap &+ 1]
                        tap &+= 2
                    }
                    if tap < count { even += loadFloats(at: pixels + tap &* 4) * pixelWeights[tap] }
                }
                storeRounded(even + odd, at: destination + output &* 4)
            }
        }
    }

    /// Makes the given output rows from the input rows (each `rowBytes` long), along this kernel's axis.
    func resampleColumns(_ source: UnsafeMutablePointer<UInt8>, rowBytes: Int, rows: Range<Int>,
                         into destination: UnsafeMutablePointer<UInt8>, unpremultiplying: Bool) {
        let sums = UnsafeMutablePointer<Float>.allocate(capacity: rowBytes)
        defer { sums.deallocate() }
        weights.withUnsafeBufferPointer { weights in
            for output in rows {
                sums.update(repeating: 0, count: rowBytes)
                for tap in 0..<counts[output] {
                    let weight = weights[output * taps + tap]
                    let row = source + (starts[output] + tap) * rowBytes
                    for index in 0..<rowBytes { sums[index] += weight * Float(row[index]) }
                }
                let target = destination + output * rowBytes
                for pixel in stride(from: 0, to: rowBytes, by: 4) {
                    let value = SIMD4<Float>(sums[pixel], sums[pixel + 1], sums[pixel + 2], sums[pixel + 3])
                    store(value, at: target + pixel, unpremultiplying: unpremultiplying)
                }
            }
        }
    }

    /// Writes one pixel, rounded and clamped (Lanczos lobes overshoot), undoing premultiplication if asked.
    private func store(_ value: SIMD4<Float>, at pixel: UnsafeMutablePointer<UInt8>, unpremultiplying: Bool) {
        var value = value
        if unpremultiplying {
            let alpha = min(max(value[3], 0), 255)
            let scale: Float = alpha > 0.5 ? 255 / alpha : 0
            value *= SIMD4(scale, scale, scale, 1)
        }
        storeRounded(value, at: pixel)
    }
}

/// sinc(x)·sinc(x/3) for |x| < 3, else 0.
private func lanczos3(_ x: Double) -> Double {
    let distance = abs(x)
    if distance < 1e-9 { return 1 }
    if distance >= 3 { return 0 }
    let angle = Double.pi * distance
    return 3 * sin(angle) * sin(angle / 3) / (angle * angle)
}
