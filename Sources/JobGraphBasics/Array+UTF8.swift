extension Array where Element == UInt8 {
    /// Appends `text`'s UTF-8 from its contiguous storage.
    ///
    /// Why not `append(contentsOf: text.utf8)`: that walks the view through its generic iterator, about 170
    /// instructions for a task's id (callgrind, a checked no-op rerun); the plain lines and the canonical
    /// encoding of a task's definition append several strings a task.
    public mutating func appendUTF8(of text: String) {
        let appended: Void? = text.utf8.withContiguousStorageIfAvailable { append(contentsOf: $0) }
        if appended == nil { append(contentsOf: text.utf8) }  // a bridged string without contiguous UTF-8
    }
}
