import JobGraphBasics
import JobGraphTestSupport
import Testing
import YAMLNodes

/// The schema check judges `YAMLNode.jsonText`, so it must carry exactly what our loader read.
struct YAMLNodeJSONTests {
    @Test(arguments: [
        // YAML 1.2 core schema: only true/false are booleans; off, NO and yes stay text.
        ("a: off\nb: true\nc: 3\nd: 2.5\ne: null\nf: \"3\"\ng: [NO, yes]",
         #"{"a":"off","b":true,"c":3,"d":2.5,"e":null,"f":"3","g":["NO","yes"]}"#),
        // A whole float stays a float, and 0x/0o integers arrive as their values.
        ("x: 2.0\nh: 0x1F\no: 0o17", #"{"x":2.0,"h":31,"o":15}"#),
        // Keys keep file order and are named by their text, whatever they resolve to.
        ("2: a\ntrue: b\nz: c", #"{"2":"a","true":"b","z":"c"}"#),
        // Quotes, backslashes and control characters are escaped; other text passes through.
        (#"s: "q\"\\\t\n\u0001é""#, #"{"s":"q\"\\\t\n\u0001é"}"#),
        // JSON has no infinities or NaN: these are the spellings Python's json module reads.
        ("p: .inf\nn: -.inf\nq: .nan", #"{"p":1e999,"n":-1e999,"q":NaN}"#),
        // Aliases and merge keys are already resolved; own keys come before merged ones.
        ("base: &b {x: 1}\nuse: {<<: *b, y: 2}", #"{"base":{"x":1},"use":{"y":2,"x":1}}"#),
    ])
    func convertsWhatTheLoaderRead(yaml: String, expectedJSON: String) throws {
        var diagnostics = Diagnostics()
        let root = try #require(YAMLLoader.load(yaml, diagnostics: &diagnostics))
        #expect(root.jsonText == expectedJSON)
    }
}
