import JobGraphBasics

extension TaskSpec {
    /// The names the task reads, each once, in the order found: every `{{ NAME }}` of its templates
    /// (`item` and `attempt` left out), every `$NAME` and `${NAME}` of its shell text and `env` values, and the name of
    /// an `env` condition. The pipeline's variables among them, with those under `export`, are the
    /// variables the task's environment and definition hold (docs/pipeline.md, "Which variables a task gets").
    public var referencedNames: [String] {
        var names: [String] = []
        var seen = Set<String>()
        func add(_ name: String) {
            if name != "item", name != "attempt", !(name == "index" && foreach != nil), seen.insert(name).inserted { names.append(name) }
        }
        func add(_ template: Template?, isShellText: Bool = false) {
            guard let template else { return }
            if let literal = template.literalText {
                if isShellText { Self.shellReferences(in: literal, add) }
                return
            }
            for segment in template.segments {
                switch segment {
                case .variable(let path, _): add(path[0])
                case .literal(let text): if isShellText { Self.shellReferences(in: text, add) }
                }
            }
        }
        switch action {
        case .run(let commands), .parallel(let commands):
            for command in commands { add(command, isShellText: true) }
        case .download(let download):
            add(download.url)
            add(download.destination)
        case .filter(let filter):
            add(filter.input)
            add(filter.output)
        }
        for template in inputs { add(template) }
        for template in outputs { add(template) }
        add(cwd)
        // A value of `env` is not run by a shell, but it is where a user writes `PATH: $PATH:…`-style text.
        for entry in environment { add(entry.value, isShellText: true) }
        for condition in conditions + (service?.ready.map { [$0] } ?? []) {
            switch condition {
            case .fileExists(let template): add(template)
            case .command(let template): add(template, isShellText: true)
            case .environmentSet(let name): add(name)
            case .reachable, .platform: break
            }
        }
        if case .file(let source)? = foreach { add(source) }
        add(onSuccess, isShellText: true)
        add(onFailure, isShellText: true)
        return names
    }

    /// Calls `found` with each name after a `$` or `${` in `text`: what a POSIX shell would expand.
    static func shellReferences(in text: String, _ found: (String) -> Void) {
        let bytes = text.utf8
        guard bytes.contains(UInt8(ascii: "$")) else { return }
        func isNameByte(_ byte: UInt8, first: Bool) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"): true
            case UInt8(ascii: "0")...UInt8(ascii: "9"): !first
            default: false
            }
        }
        var index = bytes.startIndex
        while let dollar = bytes[index...].firstIndex(of: UInt8(ascii: "$")) {
            var start = bytes.index(after: dollar)
            if start < bytes.endIndex, bytes[start] == UInt8(ascii: "{") { start = bytes.index(after: start) }
            var end = start
            while end < bytes.endIndex, isNameByte(bytes[end], first: end == start) { end = bytes.index(after: end) }
            if end > start { found(String(decoding: bytes[start..<end], as: UTF8.self)) }
            index = end > dollar ? end : bytes.index(after: dollar)
            if index >= bytes.endIndex { break }
        }
    }
}
