internal import CYAML
#if canImport(Glibc)
import Glibc
#endif
import JobGraphBasics

/// Gives the composer a document's events in batches, read by libyaml either as it asks for them or
/// ahead of it on a thread of its own.
///
/// Why a thread: libyaml takes about a quarter of loading a large pipeline (1.1 s of 4.1 s for a
/// million tasks), and composing and decoding the rest. On two cores the two can overlap.
final class EventFeed {
    /// Below this size a thread costs more than it saves.
    static let backgroundThreshold = 256 * 1024
    /// Events per batch: a reading thread hands over few, large batches; read as the composer asks,
    /// a batch stays under malloc's threshold for mapping memory of its own (128 KB).
    private static let batchSize = 4096
    private static let batchSizeReadInline = 1024
    /// Batches read ahead and not yet taken; bounds the memory a fast reader can fill.
    private static let readAhead = 4

    private let reader: EventReader
    private let pipe: BatchPipe?
    private var thread: pthread_t?
    private var ended = false

    /// - Parameter buffer: must outlive the feed; read by libyaml until `close()` returns.
    /// - Returns: `nil` when libyaml cannot start (out of memory).
    init?(_ buffer: UnsafeBufferPointer<UInt8>) {
        guard let reader = EventReader(buffer) else { return nil }
        self.reader = reader
        guard buffer.count >= Self.backgroundThreshold else {
            pipe = nil
            return
        }
        let pipe = BatchPipe(capacity: Self.readAhead)
        if let thread = try? JoinableThread.start({ Self.readAll(reader, into: pipe) }) {
            self.pipe = pipe
            self.thread = thread
        } else {
            self.pipe = nil
        }
    }

    deinit { close() }

    /// The next events in file order; `nil` after the last (the stream's end, or a failure).
    func next() -> EventBatch? {
        guard !ended else { return nil }
        if let pipe {
            guard let batch = pipe.take() else {
                ended = true
                return nil
            }
            return batch
        }
        let batch = EventBatch(capacity: Self.batchSizeReadInline)
        if !reader.read(into: batch) { ended = true }
        return batch.isEmpty ? nil : batch
    }

    /// Stops reading ahead and waits for the reading thread; the buffer is free to go after this.
    func close() {
        guard let thread else { return }
        self.thread = nil
        pipe?.cancel()
        pthread_join(thread, nil)
    }

    /// Closes the feed and tells why libyaml stopped before the stream's end, if it did.
    func closeAndTakeFailure() -> ParserFailure? {
        close()
        // Joined: the reading thread's last write is visible.
        return reader.failure
    }

    private static func readAll(_ reader: EventReader, into pipe: BatchPipe) {
        var more = true
        while more {
            let batch = EventBatch(capacity: batchSize)
            more = reader.read(into: batch)
            guard pipe.put(batch) else { break }
        }
        pipe.finish()
    }
}

/// Owns one `yaml_parser_t` reading from a buffer, and frees it.
private final class EventReader {
    private var parser = yaml_parser_t()
    private(set) var failure: ParserFailure?
    private var done = false

    init?(_ buffer: UnsafeBufferPointer<UInt8>) {
        guard yaml_parser_initialize(&parser) == 1 else { return nil }
        yaml_parser_set_input_string(&parser, buffer.baseAddress ?? UnsafePointer(bitPattern: 1), buffer.count)
    }

    deinit { yaml_parser_delete(&parser) }

    /// Appends events to `batch` until it is full.
    /// - Returns: whether more may follow: `false` once the stream's end or a failure is reached.
    func read(into batch: EventBatch) -> Bool {
        guard !done else { return false }
        var event = yaml_event_t()
        while !batch.isFull {
            guard yaml_parser_parse(&parser, &event) == 1 else {
                failure = ParserFailure(parser)
                done = true
                return false
            }
            let parsed = ParsedEvent(event)
            yaml_event_delete(&event)
            let isEnd = parsed.kind == .streamEnd
            batch.append(parsed)
            if isEnd {
                done = true
                return false
            }
        }
        return true
    }
}

/// Events the reader puts in and the composer takes out, each moved, never copied: iterating an
/// array of them copied each event and destroying the array released its strings again, 8% of
/// composing a large file (callgrind).
///
/// Filled on one thread, then handed over (through `BatchPipe`'s lock) and emptied on another.
final class EventBatch {
    private let events: UnsafeMutablePointer<ParsedEvent>
    private let capacity: Int
    private var count = 0
    private var taken = 0

    init(capacity: Int) {
        events = .allocate(capacity: capacity)
        self.capacity = capacity
    }

    deinit {
        (events + taken).deinitialize(count: count - taken)
        events.deallocate()
    }

    var isFull: Bool { count == capacity }
    var isEmpty: Bool { count == 0 }

    func append(_ event: consuming ParsedEvent) {
        (events + count).initialize(to: event)
        count += 1
    }

    /// Moves the next event out; `nil` once all were taken.
    func takeNext() -> ParsedEvent? {
        guard taken < count else { return nil }
        defer { taken += 1 }
        return (events + taken).move()
    }
}

/// Batches handed from the reading thread to the composing one, at most `capacity` waiting.
///
/// `@unchecked Sendable`: every stored property is read and written under `mutex`.
private final class BatchPipe: @unchecked Sendable {
    private let capacity: Int
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var batches: [EventBatch] = []
    private var finished = false
    private var cancelled = false

    init(capacity: Int) {
        self.capacity = capacity
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        changed.initialize(to: pthread_cond_t())
        pthread_cond_init(changed, nil)
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        changed.deallocate()
        mutex.deallocate()
    }

    /// Waits for room; returns `false`, dropping `batch`, once the taker has cancelled.
    func put(_ batch: EventBatch) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while batches.count >= capacity && !cancelled { pthread_cond_wait(changed, mutex) }
        guard !cancelled else { return false }
        batches.append(batch)
        // One condition serves both sides: only one of them can be waiting at a time.
        pthread_cond_signal(changed)
        return true
    }

    /// Nothing more will be put.
    func finish() {
        pthread_mutex_lock(mutex)
        finished = true
        pthread_cond_signal(changed)
        pthread_mutex_unlock(mutex)
    }

    /// Waits for a batch; `nil` once the putter has finished and all were taken.
    func take() -> EventBatch? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while batches.isEmpty && !finished { pthread_cond_wait(changed, mutex) }
        guard !batches.isEmpty else { return nil }
        let batch = batches.removeFirst()
        pthread_cond_signal(changed)
        return batch
    }

    /// The taker wants no more: wakes a waiting putter, which then stops.
    func cancel() {
        pthread_mutex_lock(mutex)
        cancelled = true
        pthread_cond_signal(changed)
        pthread_mutex_unlock(mutex)
    }
}
