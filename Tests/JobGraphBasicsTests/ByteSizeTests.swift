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
}
