/// The platform names `platforms:` accepts (docs/pipeline.md, "Platforms"): an operating system, an
/// architecture, or both as `os/arch`, spelt as Go and go-task spell them.
public enum Platform {
    /// Operating systems, in the order messages list them.
    public static let systems = ["linux", "darwin", "windows", "freebsd"]
    /// Architectures, in the order messages list them.
    public static let architectures = ["amd64", "arm64"]
    /// Every name an entry may be: each system, each architecture and each `system/architecture`.
    public static let names: [String] = systems + architectures + systems.flatMap { system in architectures.map { "\(system)/\($0)" } }

    /// The system this binary was built for.
    public static var currentSystem: String {
        #if os(Linux)
        "linux"
        #elseif os(macOS)
        "darwin"
        #elseif os(Windows)
        "windows"
        #elseif os(FreeBSD)
        "freebsd"
        #else
        "unknown"
        #endif
    }

    /// The architecture this binary was built for.
    public static var currentArchitecture: String {
        #if arch(x86_64)
        "amd64"
        #elseif arch(arm64)
        "arm64"
        #else
        "unknown"
        #endif
    }

    /// `linux/amd64`: how messages name the platform jobgraph runs on.
    public static var current: String { "\(currentSystem)/\(currentArchitecture)" }

    /// Whether the entry `name` (`linux`, `arm64`, `linux/arm64`) includes the platform `system/architecture`.
    public static func includes(_ name: String, system: String = currentSystem, architecture: String = currentArchitecture) -> Bool {
        if let slash = name.firstIndex(of: "/") {
            return name[..<slash] == system && name[name.index(after: slash)...] == architecture
        }
        return name == system || name == architecture
    }
}
