import Glibc

/// Linux calls that Swift's `Glibc` module does not import.
///
/// The toolchain's module map includes neither `<sys/epoll.h>`, `<sys/signalfd.h>`, `<sys/eventfd.h>` nor
/// `<sys/pidfd.h>`, and compiles `<spawn.h>` and `<unistd.h>` without `_GNU_SOURCE`, which hides `pipe2` and
/// the `_np` file actions. This module may not add a C target, so each function is looked up once in the
/// already-loaded C library with `dlsym` and called through a typed C function pointer; none of them is
/// variadic, so the call is exactly what the C header declares. A missing symbol throws `ENOSYS`.
enum LinuxCalls {
    // `dlopen(NULL)` names the main program and everything it links, glibc included; it is never closed.
    // The handle is written once, by Swift's lazy-global initialisation, and then only read.
    private nonisolated(unsafe) static let globalSymbols = dlopen(nil, RTLD_LAZY)

    static func symbol<Function>(_ name: String, as type: Function.Type) -> Function? {
        guard let address = dlsym(globalSymbols, name) else { return nil }
        return unsafeBitCast(address, to: type)
    }

    typealias EpollCreate1 = @convention(c) (CInt) -> CInt
    typealias EpollControl = @convention(c) (CInt, CInt, CInt, UnsafeMutableRawPointer?) -> CInt
    typealias EpollWait = @convention(c) (CInt, UnsafeMutableRawPointer?, CInt, CInt) -> CInt
    typealias EventFD = @convention(c) (CUnsignedInt, CInt) -> CInt
    typealias SignalFD = @convention(c) (CInt, UnsafePointer<sigset_t>?, CInt) -> CInt
    typealias PidFDOpen = @convention(c) (pid_t, CUnsignedInt) -> CInt
    typealias Pipe2 = @convention(c) (UnsafeMutablePointer<CInt>?, CInt) -> CInt
    /// `prctl` is variadic in C; every option used here takes unsigned longs, passed in integer registers
    /// exactly as the named parameters of this type are.
    typealias Prctl = @convention(c) (CInt, CUnsignedLong, CUnsignedLong, CUnsignedLong, CUnsignedLong) -> CInt
    typealias PidFDSendSignal = @convention(c) (CInt, CInt, UnsafeMutablePointer<siginfo_t>?, CUnsignedInt) -> CInt

    static let epollCreate1 = symbol("epoll_create1", as: EpollCreate1.self)
    static let epollControl = symbol("epoll_ctl", as: EpollControl.self)
    static let epollWait = symbol("epoll_wait", as: EpollWait.self)
    static let eventFD = symbol("eventfd", as: EventFD.self)
    static let signalFD = symbol("signalfd", as: SignalFD.self)
    static let pidFDOpen = symbol("pidfd_open", as: PidFDOpen.self)
    static let pipe2 = symbol("pipe2", as: Pipe2.self)
    static let prctl = symbol("prctl", as: Prctl.self)
    /// glibc 2.36 and later.
    static let pidFDSendSignal = symbol("pidfd_send_signal", as: PidFDSendSignal.self)

    /// The function, or a typed `ENOSYS` naming it.
    static func require<Function>(_ function: Function?, _ name: StaticString) throws(SystemError) -> Function {
        guard let function else { throw SystemError(String(describing: name), errno: .noFunction) }
        return function
    }

    // Constants from <sys/epoll.h>, <sys/eventfd.h> and <sys/signalfd.h>; the *_CLOEXEC and *_NONBLOCK
    // flags are defined there as O_CLOEXEC and O_NONBLOCK.
    static let epollIn: UInt32 = 0x001
    static let epollError: UInt32 = 0x008
    static let epollHangUp: UInt32 = 0x010
    static let epollAdd: CInt = 1
    /// From <linux/prctl.h>.
    static let setChildSubreaper: CInt = 36
    static let getChildSubreaper: CInt = 37

    /// `struct epoll_event` is packed on x86-64 (12 bytes, data at offset 4) and naturally aligned elsewhere.
    #if arch(x86_64)
    static let epollEventSize = 12
    static let epollDataOffset = 4
    #else
    static let epollEventSize = 16
    static let epollDataOffset = 8
    #endif

    /// `struct signalfd_siginfo` is 128 bytes with `ssi_signo` (uint32) first.
    static let signalInfoSize = 128
}
