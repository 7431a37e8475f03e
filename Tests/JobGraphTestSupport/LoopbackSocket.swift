#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A TCP socket bound to a free port on 127.0.0.1, for tests of `reachable:` and services: bound but not
/// listening, a connection to it is refused; after `listen()`, it succeeds. Closed on deinit.
///
/// Not thread-safe: use it from one task.
public final class LoopbackSocket {
    /// The port the kernel chose, 1…65535.
    public let port: Int
    private var descriptor: Int32

    /// Binds a new socket to 127.0.0.1 on a port the kernel chooses.
    public init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Self.error("socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            Glibc.close(descriptor)
            throw Self.error("bind")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else {
            Glibc.close(descriptor)
            throw Self.error("getsockname")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        self.descriptor = descriptor
    }

    deinit { close() }

    /// A port nothing is bound to at the moment of return, for a process the test starts to listen on.
    public static func freePort() throws -> Int {
        try LoopbackSocket().port
    }

    /// Starts accepting connections (the kernel completes them; nobody reads).
    public func listen() throws {
        guard Glibc.listen(descriptor, 64) == 0 else { throw Self.error("listen") }
    }

    /// Releases the port.
    public func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    private static func error(_ call: String) -> Error {
        CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "\(call): \(String(cString: strerror(errno)))"])
    }
}
