/// A NULL-terminated `char *[]` (an `argv` or `envp`) in two allocations, freed in `deinit`.
///
/// All strings share one buffer, so building an environment of a hundred entries costs two `malloc`s
/// rather than a hundred and one.
struct CStringArray: ~Copyable {
    /// The array `posix_spawn` reads; valid until this value is destroyed.
    let pointers: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
    private let bytes: UnsafeMutablePointer<CChar>

    /// Copies `strings`, or returns `nil` when one holds a NUL byte (C would silently cut it there).
    init?(_ strings: [String]) {
        var total = 0
        for string in strings { total += string.utf8.count + 1 }
        let bytes = UnsafeMutablePointer<CChar>.allocate(capacity: max(total, 1))
        let pointers = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: strings.count + 1)
        var offset = 0
        for (index, string) in strings.enumerated() {
            pointers[index] = bytes + offset
            for byte in string.utf8 {
                if byte == 0 {
                    bytes.deallocate()
                    pointers.deallocate()
                    return nil
                }
                bytes[offset] = CChar(bitPattern: byte)
                offset += 1
            }
            bytes[offset] = 0
            offset += 1
        }
        pointers[strings.count] = nil
        self.bytes = bytes
        self.pointers = pointers
    }

    deinit {
        bytes.deallocate()
        pointers.deallocate()
    }
}
