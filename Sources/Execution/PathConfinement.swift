import PipelineModel

/// The one check every templated path goes through (`to`, filter `input` and `output`, `cwd`, `inputs`,
/// `outputs`, `foreach: {from:}`, `file_exists`): no substituted value is absolute or holds a `..`, and
/// the whole rendered path, joined to its folder and normalised, lies in the pipeline's folder (contract:
/// "A value substituted into a path").
///
/// Checking each value alone is not enough: `.{{ item }}.png` with the item `./x` is `../x.png`. Literal
/// text may still go anywhere, so where the file's own text before the first placeholder already leads
/// outside (`../shared/{{ item }}`, `/data/{{ item }}`, or a literal `cwd` elsewhere), the path must stay
/// in the folder that text names. Lexical only: symbolic links inside the folder are the author's.
public struct PathConfinement: Sendable {
    /// The pipeline's folder; absolute, or relative to an unknown folder (`.`).
    public var pipelineDirectory: String

    public init(pipelineDirectory: String) {
        self.pipelineDirectory = pipelineDirectory
    }

    /// - Parameters:
    ///   - rendered: the path with its placeholders filled, as the template would have it.
    ///   - template: what the file says, for its literal prefix and the message.
    ///   - values: each placeholder's dotted name and the value substituted for it.
    ///   - key: the key the path came from, for the message (`output`, `cwd` …).
    ///   - base: the folder a relative `rendered` is joined to.
    /// - Throws: `TemplateError` naming the key, the rendered path, and the value or the folder at fault.
    public func check(_ rendered: String, of template: Template, values: [(name: String, value: String)], key: String,
                      in base: String) throws(TemplateError) {
        for (name, value) in values
        where value.hasPrefix("/") || (NormalPath.mayHoldDotDot(value) && value.split(separator: "/").contains("..")) {
            throw TemplateError(message: "\(key) '\(rendered)' (from '\(template)'): the value '\(value)' of {{ \(name) }} "
                + "may not be an absolute path or contain '..'")
        }
        // A relative path without `..`, joined to the pipeline's folder, stays in it: no need to build the
        // three normal paths below (21% of the 2,000-sample dry run of Benchmarks/snakemake.sh, by perf).
        if base == pipelineDirectory, !rendered.hasPrefix("/"), !NormalPath.mayHoldDotDot(rendered) { return }
        let folder = NormalPath(pipelineDirectory)
        var prefix = ""
        for segment in template.segments {
            guard case .literal(let text) = segment else { break }
            prefix += text
        }
        let prefixFolder = String(prefix[..<(prefix.lastIndex(of: "/").map { prefix.index(after: $0) } ?? prefix.startIndex)])
        let anchor = NormalPath(prefixFolder, in: base)
        let root = anchor.isInside(folder) ? folder : anchor
        guard !NormalPath(rendered, in: base).isInside(root) else { return }
        let place = root == folder ? "the pipeline's folder '\(pipelineDirectory)'" : "'\(root)', where the file puts it"
        throw TemplateError(message: "\(key) '\(rendered)' (from '\(template)') leads outside \(place)")
    }
}

/// A path split into components with `.` and `..` resolved lexically; a relative path keeps its leading `..`.
struct NormalPath: Equatable, CustomStringConvertible {
    var isAbsolute: Bool
    var components: [Substring]

    /// `path` joined to `base` when it is relative, then normalised.
    init(_ path: String, in base: String? = nil) {
        let joined = if let base, !path.hasPrefix("/") { base + "/" + path } else { path }
        isAbsolute = joined.hasPrefix("/")
        components = []
        for component in joined.split(separator: "/") where component != "." {
            if component != ".." {
                components.append(component)
            } else if let last = components.last, last != ".." {
                components.removeLast()
            } else if !isAbsolute {
                components.append(component)  // above a relative start: kept, so it counts as outside
            }
        }
    }

    /// Whether `text` has two dots in a row, so may have a `..` component; a byte scan, since splitting or
    /// `String.contains` of a string costs far more (perf: 1% of a no-op rerun).
    static func mayHoldDotDot(_ text: String) -> Bool {
        var previous: UInt8 = 0
        return text.utf8.contains { byte in
            defer { previous = byte }
            return byte == UInt8(ascii: ".") && previous == UInt8(ascii: ".")
        }
    }

    /// Whether this path is `folder` or below it.
    func isInside(_ folder: NormalPath) -> Bool {
        isAbsolute == folder.isAbsolute && components.starts(with: folder.components)
            && !components.dropFirst(folder.components.count).contains("..")
    }

    var description: String {
        (isAbsolute ? "/" : "") + (components.isEmpty && !isAbsolute ? "." : components.joined(separator: "/"))
    }
}
