import Testing
@testable import OutputCache

@Suite struct CacheKeyTests {
    let base = CacheKeyParts(definition: "d", inputs: [("a.c", "11")], needKeys: ["k"], environment: [("CC", "gcc")])

    @Test func everyPartChangesTheKey() {
        var changed: [CacheKeyParts] = []
        var parts = base; parts.definition = "e"; changed.append(parts)
        parts = base; parts.inputs = [("a.c", "12")]; changed.append(parts)
        parts = base; parts.inputs = [("b.c", "11")]; changed.append(parts)
        parts = base; parts.needKeys = ["j"]; changed.append(parts)
        parts = base; parts.needKeys = [nil]; changed.append(parts)
        parts = base; parts.environment = [("CC", "clang")]; changed.append(parts)
        parts = base; parts.environment = [("CC", nil)]; changed.append(parts)
        parts = base; parts.platform = "darwin/arm64"; changed.append(parts)
        let keys = Set(changed.map(\.key))
        #expect(keys.count == changed.count)
        #expect(!keys.contains(base.key))
        #expect(base.key.count == 64)
    }

    @Test func fieldsCannotRunIntoEachOther() {
        let one = CacheKeyParts(definition: "d", inputs: [("a", "b c")], needKeys: [], environment: [])
        let other = CacheKeyParts(definition: "d", inputs: [("a b", "c")], needKeys: [], environment: [])
        #expect(one.key != other.key)
    }
}
