import Foundation
import ImageCodec
import Testing

@Suite struct ImageCodecTests {
    let codec = ImageCodec()

    @Test(arguments: [true, false])
    func pngRoundTripIsExact(withAlpha: Bool) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let original = TestImages.gradient(width: 37, height: 23) { x, y in withAlpha ? UInt8((x * 7 + y) % 256) : 255 }
        let path = folder.file("round.png")
        try Data(codec.encode(original, for: path)).write(to: URL(fileURLWithPath: path))

        let decoded = try codec.decode(contentsOf: path)

        #expect(decoded == original)
    }

    @Test func jpegRoundTripIsClose() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let original = TestImages.gradient(width: 64, height: 48)
        let path = folder.file("round.JPG")
        try Data(codec.encode(original, for: path)).write(to: URL(fileURLWithPath: path))

        let decoded = try codec.decode(contentsOf: path)

        #expect(decoded.width == 64 && decoded.height == 48)
        #expect(TestImages.meanDifference(decoded, original) < 2)
        #expect(decoded.isOpaque)
    }

    @Test func jpegQualityTradesSizeForFidelity() throws {
        let original = TestImages.gradient(width: 64, height: 64)
        let low = try codec.encode(original, as: .jpeg, quality: 10, path: "low.jpg")
        let high = try codec.encode(original, as: .jpeg, quality: 100, path: "high.jpg")

        #expect(low.count < high.count)
        let lowError = TestImages.meanDifference(try codec.decode(low, path: "low.jpg"), original)
        let highError = TestImages.meanDifference(try codec.decode(high, path: "high.jpg"), original)
        #expect(highError < lowError)
    }

    @Test func formatComesFromTheContentNotTheName() throws {
        let original = TestImages.gradient(width: 8, height: 8)
        let png = try codec.encode(original, as: .png, path: "x.png")

        #expect(try codec.decode(png, path: "misnamed.jpg") == original)
    }

    @Test(arguments: [("a.png", ImageFormat.png), ("b.JPG", .jpeg), ("dir.v2/c.jpeg", .jpeg), ("d.Png", .png)])
    func formatFromExtension(path: String, format: ImageFormat) {
        #expect(ImageFormat(path: path) == format)
    }

    @Test(arguments: ["a.gif", "noextension", "dir.png/file", ".png"])
    func noFormatForOtherNames(path: String) {
        #expect(ImageFormat(path: path) == nil)
    }

    @Test func encodingForAnUnknownExtensionIsRefused() throws {
        let bitmap = TestImages.gradient(width: 2, height: 2)
        let error = #expect(throws: ImageCodecError.self) { try codec.encode(bitmap, for: "out/photo.gif") }
        #expect(error?.kind == .unsupportedFormat(extension: "gif"))
        #expect(error?.description == "cannot write 'out/photo.gif': unsupported format '.gif'; use '.png', '.jpg' or '.jpeg'")
    }

    @Test func aMissingFileIsUnreadable() {
        let error = #expect(throws: ImageCodecError.self) { try codec.decode(contentsOf: "/nonexistent/photo.png") }
        #expect(error?.kind == .unreadable(reason: "No such file or directory"))
        #expect(error?.description == "cannot read '/nonexistent/photo.png': No such file or directory")
    }

    @Test func textIsNotAnImage() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.file("notes.png")
        try Data("hello, not a picture\n".utf8).write(to: URL(fileURLWithPath: path))

        let error = #expect(throws: ImageCodecError.self) { try codec.decode(contentsOf: path) }

        #expect(error?.kind == .notAnImage)
        #expect(error?.description == "'\(path)' is not a PNG or JPEG image")
    }

    @Test(arguments: [ImageFormat.png, .jpeg])
    func aTruncatedFileIsAClearErrorNamingIt(format: ImageFormat) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.file("cut.\(format.rawValue)")
        let whole = try codec.encode(TestImages.gradient(width: 80, height: 60), as: format, path: path)
        try Data(whole.prefix(whole.count * 2 / 3)).write(to: URL(fileURLWithPath: path))

        let error = #expect(throws: ImageCodecError.self) { try codec.decode(contentsOf: path) }

        guard case .truncated(let detail)? = error?.kind else {
            Issue.record("expected a truncation error, got \(String(describing: error))")
            return
        }
        #expect(detail.hasPrefix(format == .png ? "libpng: " : "libjpeg-turbo: "))
        #expect(error?.description.hasPrefix("'\(path)' is truncated (") == true)
    }

    @Test func damagedPNGDataIsCorrupt() throws {
        var bytes = try codec.encode(TestImages.gradient(width: 40, height: 40), as: .png, path: "x.png")
        // Overwrite the middle of the compressed data; the IEND chunk stays, so it is not a truncation.
        for index in bytes.count / 2 ..< bytes.count / 2 + 16 { bytes[index] ^= 0x5A }

        let error = #expect(throws: ImageCodecError.self) { try codec.decode(bytes, path: "damaged.png") }

        guard case .corrupt(let detail)? = error?.kind else {
            Issue.record("expected a corruption error, got \(String(describing: error))")
            return
        }
        #expect(detail.hasPrefix("libpng: "))
    }

    @Test func anOversizedPNGHeaderIsRefusedBeforeDecoding() throws {
        var bytes = try codec.encode(TestImages.gradient(width: 4, height: 4), as: .png, path: "x.png")
        // IHDR follows the 8-byte signature: length (4), "IHDR" (4), width (4), height (4), …, CRC after 13 bytes.
        let declared: UInt32 = 50_000
        for (offset, value) in [(16, declared), (20, declared)] {
            withUnsafeBytes(of: value.bigEndian) { bytes.replaceSubrange(offset..<offset + 4, with: $0) }
        }
        withUnsafeBytes(of: TestImages.crc32(bytes[12..<29]).bigEndian) { bytes.replaceSubrange(29..<33, with: $0) }
        // Cut the file right after the first image-data chunk's header: no pixel data at all. A decoder
        // that went past the header (allocating 10 GB on the way) would have failed on the missing data
        // instead, so `tooLarge` shows the refusal came from the header alone, whatever the memory use
        // of the rest of this test process.
        let imageData = try #require(bytes.indices.first { Array(bytes[$0..<min($0 + 4, bytes.count)]) == Array("IDAT".utf8) })
        bytes.removeSubrange((imageData + 4)...)

        let error = #expect(throws: ImageCodecError.self) { try codec.decode(bytes, path: "huge.png") }

        #expect(error?.kind == .tooLarge(width: 50_000, height: 50_000, limit: 100_000_000))
        #expect(error?.description == "'huge.png' is 50000×50000 pixels (2500 megapixels), over the limit of 100 megapixels")
        // The same cut file with its true size is a truncated image, not a refusal.
        let honest = try codec.encode(TestImages.gradient(width: 4, height: 4), as: .png, path: "x.png")
        let truncated = Array(honest.prefix(imageData + 4))
        let decoded = #expect(throws: ImageCodecError.self) { try codec.decode(truncated, path: "cut.png") }
        guard case .truncated? = decoded?.kind else {
            Issue.record("a PNG cut after its header should be truncated, got \(String(describing: decoded))")
            return
        }
    }

    @Test func anOversizedJPEGHeaderIsRefusedBeforeDecoding() throws {
        var bytes = try codec.encode(TestImages.gradient(width: 16, height: 16), as: .jpeg, path: "x.jpg")
        // Baseline SOF0: FF C0, length (2), precision (1), height (2), width (2).
        let marker = try #require(bytes.indices.first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 })
        bytes.replaceSubrange(marker + 5 ..< marker + 9, with: [0xC3, 0x50, 0xC3, 0x50])  // 50000 × 50000

        let error = #expect(throws: ImageCodecError.self) { try codec.decode(bytes, path: "huge.jpg") }

        #expect(error?.kind == .tooLarge(width: 50_000, height: 50_000, limit: 100_000_000))
    }

    @Test func thePixelLimitIsConfigurable() throws {
        let bytes = try codec.encode(TestImages.gradient(width: 20, height: 10), as: .png, path: "x.png")

        let error = #expect(throws: ImageCodecError.self) { try ImageCodec(pixelLimit: 199).decode(bytes, path: "x.png") }

        #expect(error?.kind == .tooLarge(width: 20, height: 10, limit: 199))
        #expect(try ImageCodec(pixelLimit: 200).decode(bytes, path: "x.png").pixelCount == 200)
    }

    @Test func opaqueImagesBecomeRGBPNGs() throws {
        let opaque = try codec.encode(TestImages.gradient(width: 10, height: 10), as: .png, path: "x.png")
        let translucent = try codec.encode(TestImages.gradient(width: 10, height: 10) { _, _ in 128 }, as: .png, path: "x.png")

        // IHDR's colour type byte (offset 25): 2 is RGB, 6 is RGBA.
        #expect(opaque[25] == 2)
        #expect(translucent[25] == 6)
    }
}
