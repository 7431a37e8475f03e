import JobGraphBasics
import Glibc

/// Watches folders with inotify and reports what changed in them, in batches that end after a quiet
/// period, so an editor's save (write, rename, chmod) or a `git checkout` is one batch, not dozens.
///
/// One thread of its own blocks in `poll(2)` on the inotify descriptor and an eventfd that `stop()`
/// writes: nothing is polled on a timer while nothing changes. inotify is not recursive, so callers
/// watch every folder they care about; a file is reported by the watched folder that holds it.
///
/// `@unchecked Sendable`: the descriptors are immutable after `init` and closed only in `deinit`, after
/// the thread has been joined; the folder table and the thread handle are behind `Locked`.
public final class FileWatcher: @unchecked Sendable {
    /// One change inside a watched folder.
    public struct Change: Sendable, Hashable {
        /// The absolute path of the file or folder that changed.
        public var path: String
        /// Whether it is a folder (one created in a watched folder may need watching too).
        public var isDirectory: Bool
        /// Whether it was created or moved in, as opposed to written, removed or moved out.
        public var isCreation: Bool
    }

    // Constants from <sys/inotify.h>, which Swift's Glibc module does not import.
    private static let modify: UInt32 = 0x2
    private static let closeWrite: UInt32 = 0x8
    private static let movedFrom: UInt32 = 0x40
    private static let movedTo: UInt32 = 0x80
    private static let create: UInt32 = 0x100
    private static let delete: UInt32 = 0x200
    private static let queueOverflow: UInt32 = 0x4000
    private static let isDirectoryFlag: UInt32 = 0x4000_0000
    private static let onlyDirectory: UInt32 = 0x0100_0000
    private static let excludeUnlinked: UInt32 = 0x0400_0000
    private static let eventHeaderSize = 16

    private typealias InotifyInit1 = @convention(c) (CInt) -> CInt
    private typealias InotifyAddWatch = @convention(c) (CInt, UnsafePointer<CChar>?, UInt32) -> CInt

    private let inotify: FileDescriptor
    private let wakeup: FileDescriptor
    private let addWatch: InotifyAddWatch
    private let quietPeriod: Duration
    private let longestBatch: Duration
    private let onChanges: @Sendable ([Change]) -> Void
    /// Watch descriptor to folder path, and the folders watched.
    private let folders = Locked<(byDescriptor: [CInt: String], watched: Set<String>)>(([:], []))
    private let thread = Locked<pthread_t?>(nil)

    /// Creates the watcher and starts its thread; it watches nothing until `watch(folder:)`.
    /// - Parameters:
    ///   - quietPeriod: a batch ends once nothing changed for this long.
    ///   - longestBatch: a batch ends after this long even while changes keep coming.
    ///   - onChanges: called on the watcher's thread with each batch, in order; must not block for long.
    ///     A batch holds `nil`-free paths; an overflowed kernel queue is reported as a change of every
    ///     watched folder, so the caller rechecks everything.
    /// - Throws: `SystemError` when inotify, the eventfd or the thread cannot be created.
    public init(quietPeriod: Duration = .milliseconds(150), longestBatch: Duration = .seconds(1),
                onChanges: @escaping @Sendable ([Change]) -> Void) throws(SystemError) {
        let initialize = try LinuxCalls.require(LinuxCalls.symbol("inotify_init1", as: InotifyInit1.self), "inotify_init1")
        addWatch = try LinuxCalls.require(LinuxCalls.symbol("inotify_add_watch", as: InotifyAddWatch.self), "inotify_add_watch")
        let makeEventFD = try LinuxCalls.require(LinuxCalls.eventFD, "eventfd")
        inotify = FileDescriptor(rawValue: try sys("inotify_init1") { initialize(O_CLOEXEC | O_NONBLOCK) })
        do throws(SystemError) {
            wakeup = FileDescriptor(rawValue: try sys("eventfd") { makeEventFD(0, O_CLOEXEC | O_NONBLOCK) })
        } catch {
            inotify.closeIgnoringErrors()
            throw error
        }
        self.quietPeriod = quietPeriod
        self.longestBatch = longestBatch
        self.onChanges = onChanges

        // The thread holds a strong reference until `readLoop()` returns.
        // On failure every property is set, so `deinit` closes the descriptors.
        let handle = try JoinableThread.startThrowingSystemError { self.readLoop() }
        thread.withLock { $0 = handle }
    }

    deinit {
        inotify.closeIgnoringErrors()
        wakeup.closeIgnoringErrors()
    }

    /// Starts watching `folder` (absolute) for files written, created, removed or moved in or out;
    /// watching a folder twice is harmless. Safe from any thread.
    /// - Throws: `SystemError` from `inotify_add_watch`, for instance `ENOENT` for a missing folder.
    public func watch(folder: String) throws(SystemError) {
        guard !folders.withLock({ $0.watched.contains(folder) }) else { return }
        let mask = Self.modify | Self.closeWrite | Self.movedFrom | Self.movedTo | Self.create | Self.delete
            | Self.onlyDirectory | Self.excludeUnlinked
        let descriptor = try sys("inotify_add_watch", subject: folder) { folder.withCString { addWatch(inotify.rawValue, $0, mask) } }
        folders.withLock {
            $0.byDescriptor[descriptor] = folder
            $0.watched.insert(folder)
        }
    }

    /// The folders watched so far.
    public var watchedFolders: Set<String> { folders.withLock { $0.watched } }

    /// Ends the thread and waits for it; no batch is delivered after this returns. Call once.
    public func stop() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeup.rawValue, &one, 8)  // an eventfd write of 1 cannot fail short of overflow
        guard let handle = thread.withLock({ value -> pthread_t? in defer { value = nil }; return value }) else { return }
        pthread_join(handle, nil)
    }

    private func readLoop() {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64 * 1024, alignment: 8)
        defer { buffer.deallocate() }
        var batch: [Change] = []
        var seen = Set<Change>()
        var batchStart: ContinuousClock.Instant?
        while true {
            // Block until something happens, or, with a batch under way, until the quiet period passes.
            var timeout: CInt = -1
            if let batchStart {
                let left = min(quietPeriod, longestBatch - (ContinuousClock.now - batchStart))
                timeout = CInt(max(0, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            }
            var descriptors = [pollfd(fd: inotify.rawValue, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: wakeup.rawValue, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&descriptors, 2, timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                return  // only EFAULT/EINVAL/ENOMEM: nothing a retry would mend
            }
            if descriptors[1].revents != 0 { return }
            if ready == 0 || (batchStart.map { ContinuousClock.now - $0 >= longestBatch } ?? false) {
                if !batch.isEmpty { onChanges(batch) }
                batch.removeAll()
                seen.removeAll()
                batchStart = nil
                if ready == 0 { continue }
            }
            for change in readChanges(into: buffer, capacity: 64 * 1024) where seen.insert(change).inserted {
                batch.append(change)
            }
            if !batch.isEmpty, batchStart == nil { batchStart = ContinuousClock.now }
        }
    }

    /// Reads every queued inotify event (the descriptor is non-blocking).
    private func readChanges(into buffer: UnsafeMutableRawPointer, capacity: Int) -> [Change] {
        var changes: [Change] = []
        while true {
            let count = Glibc.read(inotify.rawValue, buffer, capacity)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return changes }
            let table = folders.withLock { $0.byDescriptor }
            var offset = 0
            while offset + Self.eventHeaderSize <= count {
                let descriptor = buffer.load(fromByteOffset: offset, as: CInt.self)
                let mask = buffer.load(fromByteOffset: offset + 4, as: UInt32.self)
                let nameLength = Int(buffer.load(fromByteOffset: offset + 12, as: UInt32.self))
                let nameStart = buffer.advanced(by: offset + Self.eventHeaderSize).assumingMemoryBound(to: CChar.self)
                let name = nameLength > 0 ? String(cString: nameStart) : ""
                offset += Self.eventHeaderSize + nameLength
                if mask & Self.queueOverflow != 0 {
                    changes += table.values.map { Change(path: $0, isDirectory: true, isCreation: false) }
                    continue
                }
                guard let folder = table[descriptor], !name.isEmpty else { continue }
                changes.append(Change(path: folder == "/" ? "/" + name : folder + "/" + name,
                                      isDirectory: mask & Self.isDirectoryFlag != 0,
                                      isCreation: mask & (Self.create | Self.movedTo) != 0))
            }
        }
    }
}
