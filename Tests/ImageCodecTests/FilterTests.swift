import ImageCodec
import Testing

@Suite struct FilterTests {
    @Test(arguments: [(UInt8(0), RGBA(0, 0, 0)), (100, RGBA(135, 120, 94)), (200, RGBA(255, 241, 187)), (255, RGBA(255, 255, 239))] as [(UInt8, RGBA)])
    func sepiaOfGreyFollowsTheMatrix(grey: UInt8, expected: RGBA) throws {
        let image = try #require(Bitmap(width: 3, height: 2, filledWith: RGBA(grey, grey, grey)))

        let toned = image.sepiaToned()

        #expect(toned[0, 0] == expected)
        #expect(toned[2, 1] == expected)
    }

    @Test func sepiaIntensityMixesWithTheOriginal() throws {
        let image = try #require(Bitmap(width: 2, height: 2, filledWith: RGBA(200, 200, 200, 77)))

        #expect(image.sepiaToned(intensity: 0) == image)
        // Full sepia of grey 200 is (255, 240.6, 187.4); half way to 200 is (227.5, 220.3, 193.7), alpha untouched.
        #expect(image.sepiaToned(intensity: 0.5)[1, 1] == RGBA(228, 220, 194, 77))
    }

    @Test func sepiaOfAColourUsesAllThreeChannels() throws {
        let image = try #require(Bitmap(width: 1, height: 1, filledWith: RGBA(10, 100, 200)))
        // r' = .393·10 + .769·100 + .189·200 = 118.63, g' = 105.69, b' = 82.32
        #expect(image.sepiaToned()[0, 0] == RGBA(119, 106, 82))
    }

    @Test(arguments: [(RGBA(255, 0, 0), 54), (RGBA(0, 255, 0), 182), (RGBA(0, 0, 255), 18), (RGBA(255, 255, 255), 255),
                      (RGBA(100, 150, 200), 143)] as [(RGBA, UInt8)])
    func grayscaleIsRec709Luma(color: RGBA, luma: UInt8) throws {
        let image = try #require(Bitmap(width: 2, height: 1, filledWith: RGBA(color.red, color.green, color.blue, 9)))

        #expect(image.grayscaled()[1, 0] == RGBA(luma, luma, luma, 9))
    }

    @Test func invertFlipsColoursAndKeepsAlpha() throws {
        var image = try #require(Bitmap(width: 2, height: 1, filledWith: RGBA(0, 0, 0)))
        image[0, 0] = RGBA(255, 0, 0, 255)
        image[1, 0] = RGBA(10, 128, 250, 40)

        let inverted = image.inverted()

        #expect(inverted[0, 0] == RGBA(0, 255, 255, 255))
        #expect(inverted[1, 0] == RGBA(245, 127, 5, 40))
        #expect(inverted.inverted() == image)
    }

    @Test func blurSpreadsOnePixelSymmetricallyAndKeepsItsEnergy() throws {
        var image = try #require(Bitmap(width: 41, height: 41, filledWith: RGBA(0, 0, 0)))
        image[20, 20] = RGBA(255, 255, 255)

        let blurred = image.blurred(radius: 1.5)

        // A 2-D Gaussian of σ = 1.5 peaks at 255 / (2π·σ²) ≈ 18.
        let center = blurred[20, 20].red
        #expect(center >= 15 && center <= 21)
        for offset in 1...6 {
            let right = blurred[20 + offset, 20].red
            #expect(blurred[20 - offset, 20].red == right)
            #expect(blurred[20, 20 + offset].red == right)
            #expect(blurred[20, 20 - offset].red == right)
            #expect(right <= blurred[20 + offset - 1, 20].red)
        }
        // Two σ away: e^(-2) ≈ 14% of the peak.
        #expect(blurred[23, 20].red < center / 4)
        // The energy of one white pixel (255) is spread around but kept, up to the rounding of small values.
        let energy = TestImages.channelSum(blurred, channel: 0)
        #expect(abs(energy - 255) < 26)
        #expect(blurred[0, 0] == RGBA(0, 0, 0))
    }

    @Test func blurHasAGaussianWidth() throws {
        var image = try #require(Bitmap(width: 201, height: 1, filledWith: RGBA(0, 0, 0)))
        image[100, 0] = RGBA(255, 255, 255)

        let blurred = image.blurred(radius: 10)

        // Horizontally the blur is a 1-D Gaussian of σ = 10: the peak is about 255 / (σ·√(2π)) ≈ 10.2,
        // and one σ away it falls to e^(-1/2) ≈ 61% of it.
        let peak = Double(blurred[100, 0].red), atSigma = Double(blurred[110, 0].red)
        #expect(abs(peak - 10.2) <= 1.5)
        #expect(abs(atSigma / peak - 0.61) < 0.12)
    }

    @Test func blurLeavesAUniformImageAlone() throws {
        let image = try #require(Bitmap(width: 30, height: 20, filledWith: RGBA(12, 34, 56, 255)))
        #expect(image.blurred(radius: 4) == image)
    }

    @Test func blurDoesNotBleedTheColourOfTransparentPixels() throws {
        var image = try #require(Bitmap(width: 20, height: 1, filledWith: RGBA(255, 0, 0, 0)))
        for x in 10..<20 { image[x, 0] = RGBA(0, 0, 255, 255) }

        let blurred = image.blurred(radius: 2)

        // Near the edge the blue fades out in alpha, but stays blue: the invisible red does not mix in.
        let edge = blurred[10, 0]
        #expect(edge.alpha > 60 && edge.alpha < 200)
        #expect(edge.red == 0 && edge.blue == 255)
    }

    @Test func tiltShiftKeepsTheMiddleBandSharpAndBlursMoreTowardsTheEdges() throws {
        let image = TestImages.checkerboard(width: 60, height: 90, cell: 2)

        let shifted = image.tiltShifted(radius: 4)

        for y in 30..<60 {
            for x in 0..<60 { #expect(shifted[x, y] == image[x, y]) }
        }
        // Contrast (distance from mid grey) is full in the sharp band and falls towards the top and bottom.
        func contrast(_ y: Int) -> Int { (0..<60).map { abs(Int(shifted[$0, y].red) - 128) }.reduce(0, +) / 60 }
        #expect(contrast(45) == 127)
        #expect(contrast(20) < contrast(28))
        #expect(contrast(2) < contrast(20))
        #expect(contrast(87) < contrast(70))
    }

    @Test func resizeKeepsTheAspectWhenOneSideIsGiven() throws {
        let image = TestImages.gradient(width: 120, height: 80)

        #expect(image.resizedSize(width: 60, height: nil) == (60, 40))
        #expect(image.resizedSize(width: nil, height: 20) == (30, 20))
        #expect(image.resizedSize(width: 10, height: 50) == (10, 50))
        let resized = image.resized(width: 30, height: nil)
        #expect(resized.width == 30 && resized.height == 20)
    }

    @Test func shrinkingAveragesTheArea() throws {
        // One-pixel stripes shrunk 4×: nearest neighbour would keep black or white; area coverage gives grey.
        let image = TestImages.checkerboard(width: 64, height: 64)

        let small = image.resized(width: 16, height: 16)

        for y in 2..<14 {
            for x in 2..<14 { #expect(abs(Int(small[x, y].red) - 128) <= 3) }
        }
    }

    @Test func resizingKeepsAverageColour() throws {
        let image = TestImages.gradient(width: 90, height: 60)

        for (width, height) in [(45, 30), (200, 133), (17, 60)] {
            let resized = image.resized(width: width, height: height)
            for channel in 0..<3 {
                let before = Double(TestImages.channelSum(image, channel: channel)) / Double(image.pixelCount)
                let after = Double(TestImages.channelSum(resized, channel: channel)) / Double(resized.pixelCount)
                #expect(abs(before - after) < 1.5, "channel \(channel) at \(width)×\(height)")
            }
        }
    }

    @Test func enlargingIsSmooth() throws {
        var image = try #require(Bitmap(width: 2, height: 1, filledWith: RGBA(0, 0, 0)))
        image[1, 0] = RGBA(200, 200, 200)

        let large = image.resized(width: 8, height: 1)

        // A ramp between the two, not two blocks of four.
        let reds = (0..<8).map { large[$0, 0].red }
        #expect(reds[0] < 10 && reds[7] > 190)
        #expect(zip(reds, reds.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(Set(reds).count >= 5)
    }

    @Test func effectsStopWhenCancelled() throws {
        let image = TestImages.gradient(width: 64, height: 64)
        let cancellation = CancellationFlag()
        cancellation.cancel()

        for effect in [ImageEffect.sepia(intensity: 1), .blur(radius: 3), .resize(width: 10, height: nil), .tiltShift(radius: nil)] {
            let error = #expect(throws: ImageCodecError.self) {
                try effect.applied(to: image, cancellation: cancellation, path: "out.png")
            }
            #expect(error?.kind == .cancelled)
        }
    }

    @Test func aResizeOverThePixelLimitIsRefused() throws {
        let image = TestImages.gradient(width: 10, height: 10)

        let error = #expect(throws: ImageCodecError.self) {
            try ImageEffect.resize(width: 2000, height: nil).applied(to: image, pixelLimit: 1_000_000, path: "big.png")
        }

        #expect(error?.kind == .tooLarge(width: 2000, height: 2000, limit: 1_000_000))
    }

    @Test func absurdParametersNeitherTrapNorAllocate() throws {
        let image = TestImages.gradient(width: 12, height: 8)

        let size = image.resizedSize(width: Int.max, height: nil)
        #expect(size.width == Int.max && size.height > Int.max / 2)
        let error = #expect(throws: ImageCodecError.self) {
            try ImageEffect.resize(width: nil, height: Int.max).applied(to: image, path: "out.png")
        }
        #expect(error?.kind == .tooLarge(width: Int.max, height: Int.max, limit: ImageCodec.defaultPixelLimit))
        #expect(error?.description.hasSuffix("over the limit of 100 megapixels") == true)
        // A blur far wider than the image averages it: every pixel near the mean colour.
        let flat = image.blurred(radius: 1e300)
        #expect(flat.width == 12 && flat.height == 8)
        #expect(abs(Int(flat[0, 0].red) - Int(flat[11, 7].red)) < 40)
    }

    @Test func effectsOnAnImageTallEnoughForManyBandsMatchOneBand() throws {
        // Bands run on several threads; every row must be filtered exactly once.
        let tall = TestImages.gradient(width: 7, height: 500)
        let sepia = tall.sepiaToned()
        for y in [0, 1, 250, 498, 499] {
            let row = try #require(Bitmap(width: 7, height: 1, pixels: Array(tall.pixels[(y * 28)..<(y * 28 + 28)])))
            let expected = row.sepiaToned()
            for x in 0..<7 { #expect(sepia[x, y] == expected[x, 0]) }
        }
    }
}
