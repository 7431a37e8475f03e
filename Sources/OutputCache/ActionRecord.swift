import Foundation

/// What the cache holds under a task's key (`ac/KEY`): its outputs, its log and who stored them. Encoded
/// as JSON; blobs are named by their SHA-256 (`cas/SHA256`).
struct ActionRecord: Codable, Sendable, Equatable {
    /// One path among a task's outputs, relative to its folder.
    struct Output: Codable, Sendable, Equatable {
        enum Kind: String, Codable, Sendable { case file, symlink, directory }
        var path: String
        var kind: Kind
        /// Permission bits (the exec bit among them), for a file or a folder.
        var mode: UInt32?
        /// A file's content.
        var sha256: String?
        var size: Int64?
        /// A symbolic link's target, as written.
        var target: String?
    }

    var format: Int
    var outputs: [Output]
    /// The log's content, and its size in bytes.
    var log: String
    var logSize: Int64
    /// The history's run number of the run that stored it, when it had one.
    var run: Int64?
    var host: String
    /// ISO 8601.
    var time: String
    /// The task's id where it was stored.
    var task: String

    enum CodingKeys: String, CodingKey {
        case format, outputs, log
        case logSize = "log_size"
        case run, host, time, task
    }

    /// Every blob it names: the outputs' contents and the log.
    var blobs: [(sha256: String, size: Int64)] {
        outputs.compactMap { output in output.sha256.map { ($0, output.size ?? 0) } } + [(log, logSize)]
    }

    /// `stored by run 12 on build-3 at 2026-11-28T17:00:00Z`.
    var storedBy: String {
        "stored by " + (run.map { "run \($0) " } ?? "") + "on \(host) at \(time)"
    }

    func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding plain strings and numbers cannot fail.
        return (try? Array(encoder.encode(self))) ?? []
    }

    /// `nil` for bytes that are not a record of this format, or that name a path outside the task's folder
    /// (`../x`, `/x`, or a path below one of its own symbolic links, which a restore would follow).
    static func decoded(_ bytes: [UInt8]) -> ActionRecord? {
        guard let record = try? JSONDecoder().decode(ActionRecord.self, from: Data(bytes)),
              record.format == CacheKeyParts.formatVersion,
              record.outputs.allSatisfy({ OutputPaths.isConfined($0.path) }),
              record.blobs.allSatisfy({ BlobDigest.isValid($0.sha256) }) else { return nil }
        let links = Set(record.outputs.filter { $0.kind == .symlink }.map { $0.path + "/" })
        if !links.isEmpty, record.outputs.contains(where: { output in links.contains { output.path.hasPrefix($0) } }) { return nil }
        return record
    }
}

enum BlobDigest {
    static func isValid(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
