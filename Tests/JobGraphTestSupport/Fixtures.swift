import Foundation

/// Where the test fixtures live, found from this file's path so tests run from any directory.
public enum Fixtures {
    /// `Tests/Fixtures`.
    public static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// The repository's root.
    public static let repositoryRoot: URL = directory.deletingLastPathComponent().deletingLastPathComponent()

    /// The `.yaml` files of one fixture folder (`valid` or `invalid`), sorted by name.
    public static func yamlFiles(in folder: String) -> [URL] {
        let folderURL = directory.appendingPathComponent(folder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folderURL.path)) ?? []
        return names.filter { $0.hasSuffix(".yaml") }.sorted().map { folderURL.appendingPathComponent($0) }
    }
}
