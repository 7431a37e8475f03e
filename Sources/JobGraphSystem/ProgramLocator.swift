import JobGraphBasics
import Glibc

/// Finds a program in a `PATH` the way `execvp` does, remembering each answer.
///
/// A pipeline runs the same few programs thousands of times; the cache makes the lookup one dictionary
/// probe after the first. Only answers found through absolute `PATH` entries are cached: a relative or
/// empty entry means "relative to the child's working directory", which differs between tasks. A program
/// that is not found is not cached either, since an earlier task may install it. Safe from any thread
/// (the cache is behind a `Locked` box).
public final class ProgramLocator: Sendable {
    private struct Key: Hashable {
        var searchPath: String
        var name: String
    }

    private let cache = Locked<[Key: String]>([:])

    /// `execvp`'s search path when the environment has no `PATH`.
    public static let defaultSearchPath = "/bin:/usr/bin"

    /// The value of the first `PATH=` entry of an environment's `NAME=value` entries; `nil` when none.
    public static func searchPath(in entries: some Sequence<String>) -> String? {
        entries.first { $0.hasPrefix("PATH=") }.map { String($0.dropFirst(5)) }
    }

    /// An empty cache.
    public init() {}

    /// The path to exec for `name`, or `nil` when no executable regular file of that name is on the path.
    ///
    /// - Parameters:
    ///   - name: a program name without `/` (a name with one needs no search: exec it as it is).
    ///   - searchPath: the child's `PATH`, colon-separated; an empty entry means the working directory.
    public func locate(_ name: String, searchPath: String) -> String? {
        let key = Key(searchPath: searchPath, name: name)
        if let known = cache.withLock({ $0[key] }) { return known }

        var isCacheable = true
        for directory in searchPath.split(separator: ":", omittingEmptySubsequences: false) {
            if !directory.hasPrefix("/") { isCacheable = false }
            let candidate = directory.isEmpty ? name : "\(directory)/\(name)"
            if Self.isExecutableFile(candidate) {
                if isCacheable { cache.withLock { $0[key] = candidate } }
                return candidate
            }
        }
        return nil
    }

    /// A regular file the effective user may execute (root needs an execute bit, so the mode is checked).
    static func isExecutableFile(_ path: String) -> Bool {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return false }
        return faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) == 0
    }
}
