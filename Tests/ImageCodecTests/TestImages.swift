import Foundation
import ImageCodec

/// A fresh folder under the system's temporary directory, removed by `remove()`.
struct TemporaryFolder {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "imagecodec-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    func remove() { try? FileManager.default.removeItem(atPath: path) }  // best effort: the OS cleans /tmp too
}

enum TestImages {
    /// A smooth colourful gradient with a soft diagonal, like a photo's content: compresses well as JPEG.
    static func gradient(width: Int, height: Int, alpha: (Int, Int) -> UInt8 = { _, _ in 255 }) -> Bitmap {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                pixels.append(UInt8(x * 255 / max(width - 1, 1)))
                pixels.append(UInt8(y * 255 / max(height - 1, 1)))
                pixels.append(UInt8((x + y) * 255 / max(width + height - 2, 1)))
                pixels.append(alpha(x, y))
            }
        }
        return Bitmap(width: width, height: height, pixels: pixels)!
    }

    /// Black and white squares of `cell` pixels.
    static func checkerboard(width: Int, height: Int, cell: Int = 1) -> Bitmap {
        var bitmap = Bitmap(width: width, height: height, filledWith: RGBA(0, 0, 0))!
        for y in 0..<height {
            for x in 0..<width where (x / cell + y / cell) % 2 == 0 { bitmap[x, y] = RGBA(255, 255, 255) }
        }
        return bitmap
    }

    /// The mean absolute difference per colour channel.
    static func meanDifference(_ a: Bitmap, _ b: Bitmap) -> Double {
        var total = 0
        for index in a.pixels.indices where index % 4 != 3 { total += abs(Int(a.pixels[index]) - Int(b.pixels[index])) }
        return Double(total) / Double(a.pixelCount * 3)
    }

    /// The sum of one channel over the image.
    static func channelSum(_ bitmap: Bitmap, channel: Int) -> Int {
        stride(from: channel, to: bitmap.pixels.count, by: 4).reduce(0) { $0 + Int(bitmap.pixels[$1]) }
    }

    /// CRC-32 as PNG chunks use it (ISO 3309, reflected, polynomial 0xEDB88320).
    static func crc32<Bytes: Sequence>(_ bytes: Bytes) -> UInt32 where Bytes.Element == UInt8 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc >> 1) ^ (crc & 1 == 1 ? 0xEDB8_8320 : 0) }
        }
        return ~crc
    }
}
