import JobGraphBasics
import Glibc

/// The `posix_spawn` attributes and file actions every child gets, built once and reused.
///
/// Why: they are the same for every child but for two things, the descriptor of its output pipe and its
/// working directory, and building them per child cost 3% of a clean run's user time and six `prlimit64`
/// calls (glibc's `posix_spawn_file_actions_add*` each ask for the descriptor limit; perf and strace,
/// 10,000 `touch` tasks). File actions name descriptors by number, so a set built for pipe descriptor 9
/// and folder `/p` is exactly right for every later child whose pipe is descriptor 9 in `/p`; a run
/// reuses a handful of numbers. `posix_spawn` only reads both, so threads share them.
final class SpawnSettings: @unchecked Sendable {
    // `@unchecked`: `attributes` is written in `init` only; the cache is behind a `Locked` box and its
    // entries are immutable once built.
    private struct Key: Hashable {
        var output: CInt
        var workingDirectory: String?
    }

    /// The attributes: own process group, empty signal mask, default actions for every catchable signal.
    /// On the heap, as a pointer: threads read it at once, which an `inout` access to a stored property
    /// would make an exclusivity violation.
    private let attributes = UnsafeMutablePointer<posix_spawnattr_t>.allocate(capacity: 1)
    private let isReady: Bool
    private let fileActions = Locked<[Key: SpawnFileActions]>([:])
    /// Sets kept at most: beyond it (tasks in many folders) the cache starts again.
    private static let cacheLimit = 64

    init() {
        attributes.initialize(to: posix_spawnattr_t())
        isReady = Self.configure(attributes)
    }

    deinit {
        if isReady { posix_spawnattr_destroy(attributes) }
        attributes.deallocate()
    }

    /// Calls `body` with the file actions for a child writing to `output` in `workingDirectory`, and the
    /// attributes.
    func withSettings<Result>(
        output: FileDescriptor, workingDirectory: String?,
        _ body: (UnsafePointer<posix_spawn_file_actions_t>, UnsafePointer<posix_spawnattr_t>) throws(SystemError) -> Result
    ) throws(SystemError) -> Result {
        guard isReady else { throw SystemError("posix_spawnattr_init", errno: .invalidArgument) }
        let key = Key(output: output.rawValue, workingDirectory: workingDirectory)
        let actions: SpawnFileActions
        if let cached = fileActions.withLock({ $0[key] }) {
            actions = cached
        } else {
            actions = try SpawnFileActions(output: output, workingDirectory: workingDirectory)
            fileActions.withLock { cache in
                if cache.count >= Self.cacheLimit { cache.removeAll(keepingCapacity: true) }
                cache[key] = actions
            }
        }
        // `actions` stays alive to the end of this call, however the cache changes meanwhile.
        return try withExtendedLifetime(actions) { () throws(SystemError) -> Result in try body(actions.pointer, attributes) }
    }

    private static func configure(_ attributes: UnsafeMutablePointer<posix_spawnattr_t>) -> Bool {
        guard posix_spawnattr_init(attributes) == 0 else { return false }
        let flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        var defaults = SignalSet.allCatchable
        guard posix_spawnattr_setflags(attributes, Int16(flags)) == 0,
              posix_spawnattr_setpgroup(attributes, 0) == 0,
              posix_spawnattr_setsigmask(attributes, &emptyMask) == 0,
              posix_spawnattr_setsigdefault(attributes, &defaults) == 0
        else {
            posix_spawnattr_destroy(attributes)
            return false
        }
        return true
    }
}

/// One child's file actions: output and errors to the pipe, input from `/dev/null`, its folder, and no
/// other descriptor. Immutable once built.
final class SpawnFileActions: @unchecked Sendable {
    /// On the heap for the same reason as `SpawnSettings.attributes`.
    let pointer = UnsafeMutablePointer<posix_spawn_file_actions_t>.allocate(capacity: 1)

    init(output: FileDescriptor, workingDirectory: String?) throws(SystemError) {
        pointer.initialize(to: posix_spawn_file_actions_t())
        let actions = pointer
        do throws(SystemError) {
            try sysReturningError("posix_spawn_file_actions_init") { posix_spawn_file_actions_init(actions) }
        } catch {
            pointer.deallocate()
            throw error
        }
        do throws(SystemError) {
            // Order matters if this process runs with 0–2 closed and the pipe got one of those numbers:
            // duplicate first, then open /dev/null over 0. glibc clears close-on-exec for dup2(fd, fd).
            try sysReturningError("posix_spawn_file_actions_adddup2") {
                posix_spawn_file_actions_adddup2(actions, output.rawValue, STDOUT_FILENO)
            }
            try sysReturningError("posix_spawn_file_actions_adddup2") {
                posix_spawn_file_actions_adddup2(actions, output.rawValue, STDERR_FILENO)
            }
            try sysReturningError("posix_spawn_file_actions_addopen") {
                posix_spawn_file_actions_addopen(actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
            }
            if let workingDirectory {
                let addChdir = try LinuxCalls.require(LinuxCalls.addChdir, "posix_spawn_file_actions_addchdir_np")
                try sysReturningError("posix_spawn_file_actions_addchdir_np", subject: workingDirectory) {
                    addChdir(actions, workingDirectory)
                }
            }
            if let addClosefrom = LinuxCalls.addClosefrom {
                try sysReturningError("posix_spawn_file_actions_addclosefrom_np") { addClosefrom(actions, 3) }
            }
        } catch {
            posix_spawn_file_actions_destroy(actions)
            pointer.deallocate()
            throw error
        }
    }

    deinit {
        posix_spawn_file_actions_destroy(pointer)
        pointer.deallocate()
    }
}
