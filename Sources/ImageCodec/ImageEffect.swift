/// One of the `filter` step's effects with its parameters, applied to a bitmap.
public enum ImageEffect: Hashable, Sendable {
    /// `Bitmap.sepiaToned(intensity:)`; intensity 0…1.
    case sepia(intensity: Double)
    /// `Bitmap.grayscaled()`.
    case grayscale
    /// `Bitmap.inverted()`.
    case invert
    /// `Bitmap.blurred(radius:)`; nil means 1% of the image's shorter side.
    case blur(radius: Double?)
    /// `Bitmap.tiltShifted(radius:)`; nil means 1% of the image's shorter side.
    case tiltShift(radius: Double?)
    /// `Bitmap.resized(width:height:)`.
    case resize(width: Int?, height: Int?)

    /// The radius used when none is given: scaled to the image, so the look is the same at any resolution.
    public static func defaultRadius(for bitmap: Bitmap) -> Double {
        max(1, Double(min(bitmap.width, bitmap.height)) / 100)
    }

    /// The size of the result for an input of the given size.
    public func outputSize(for bitmap: Bitmap) -> (width: Int, height: Int) {
        if case .resize(let width, let height) = self { return bitmap.resizedSize(width: width, height: height) }
        return (bitmap.width, bitmap.height)
    }

    /// Applies the effect, using every core and checking `cancellation` between bands of rows.
    /// - Parameters:
    ///   - pixelLimit: the most pixels the result may have (a resize could ask for more).
    ///   - path: names the result in errors.
    /// - Throws: `ImageCodecError`: `.tooLarge` for a result over `pixelLimit` (checked before allocating it),
    ///   `.cancelled` once `cancellation` is set.
    public func applied(to bitmap: consuming Bitmap, pixelLimit: Int = ImageCodec.defaultPixelLimit,
                        cancellation: CancellationFlag? = nil, path: String) throws(ImageCodecError) -> Bitmap {
        let size = outputSize(for: bitmap)
        try ImageCodec.checkSize(width: size.width, height: size.height, limit: pixelLimit, path: path)
        var result = consume bitmap
        let finished: Bool
        switch self {
        case .sepia(let intensity): finished = result.applySepia(intensity: intensity, cancellation: cancellation)
        case .grayscale: finished = result.applyGrayscale(cancellation: cancellation)
        case .invert: finished = result.applyInvert(cancellation: cancellation)
        case .blur(let radius):
            finished = result.applyBlur(radius: radius ?? Self.defaultRadius(for: result), cancellation: cancellation)
        case .tiltShift(let radius):
            finished = result.applyTiltShift(radius: radius ?? Self.defaultRadius(for: result), cancellation: cancellation)
        case .resize(let width, let height):
            guard let resized = result.resized(width: width, height: height, cancellation: cancellation) else {
                throw ImageCodecError(path: path, kind: .cancelled)
            }
            result = resized
            finished = true
        }
        guard finished else { throw ImageCodecError(path: path, kind: .cancelled) }
        return result
    }
}
