/// A Float rounded to the nearest byte, clamped to 0…255, without a conversion instruction that could trap.
///
/// Adding 1.5 · 2^23 moves the rounded integer into the low bits of the mantissa, read with `bitPattern`:
/// a cheaper path than Swift's checked `UInt8(Float)`, and it vectorizes.
@inline(__always)
func roundedByte(_ value: Float) -> UInt8 {
    UInt8(truncatingIfNeeded: (min(max(value, 0), 255) + 12_582_912).bitPattern)
}

/// Four Floats (one RGBA pixel) rounded and clamped into `pixel[0...3]`.
@inline(__always)
func storeRounded(_ value: SIMD4<Float>, at pixel: UnsafeMutablePointer<UInt8>) {
    pixel[0] = roundedByte(value[0])
    pixel[1] = roundedByte(value[1])
    pixel[2] = roundedByte(value[2])
    pixel[3] = roundedByte(value[3])
}

/// One RGBA pixel's bytes as four Floats, 0…255.
@inline(__always)
func loadFloats(at pixel: UnsafeMutablePointer<UInt8>) -> SIMD4<Float> {
    SIMD4<Float>(Float(pixel[0]), Float(pixel[1]), Float(pixel[2]), Float(pixel[3]))
}
