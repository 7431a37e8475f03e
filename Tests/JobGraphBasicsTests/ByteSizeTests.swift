import JobGraphBasics
import Testing

@Suite struct ByteSizeTests {
    @Test func sizesParseAsTheCommandLineGivesThem() {
        #expect(ByteSize.parse("5G") == 5 << 30)
        #expect(ByteSize.parse("500m") == 500 << 20)
        #expect(ByteSize.parse("1.5KiB") == 1536)
        #expect(ByteSize.parse("1024") == 1024)
        #expect(ByteSize.parse("five") == nil)
        #expect(ByteSize.text(1536) == "1.5 KiB")
    }

    @Test func shortTextIsAsAFileWritesASize() {
        #expect(ByteSize.shortText(8 << 30) == "8G")
        #expect(ByteSize.shortText(1536 << 20) == "1.5G")
        #expect(ByteSize.shortText(512 << 20) == "512M")
        #expect(ByteSize.shortText(300) == "300B")
    }
}
