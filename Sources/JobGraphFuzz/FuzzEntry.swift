// Two programs from one target. Built with `-D FUZZING -sanitize=fuzzer` (see Fuzz/run.sh), `FuzzEntry`
// hands control to libFuzzer; built normally, `Reproducer` replays inputs.
//
// libFuzzer's own `main` cannot be used: SwiftPM links every executable with `main` aliased to the
// target's renamed entry point, so the target must have an entry point, and it calls
// `LLVMFuzzerRunDriver` (libFuzzer's documented way to start from one's own `main`).

#if FUZZING
#if canImport(Glibc)
import Glibc
#endif

/// The fuzzer build's `main`: runs libFuzzer over `LLVMFuzzerTestOneInput`, with the command line's flags.
@main
enum FuzzEntry {
    static func main() {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput))
    }
}

/// libFuzzer's driver, `int LLVMFuzzerRunDriver(int *, char ***, int (*)(const uint8_t *, size_t))`.
/// Declared by symbol name because only a C shim could import it; pointer and integer arguments pass
/// the same way under the Swift and C conventions on x86-64 and arm64.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// libFuzzer's callback: one input per call; returns 0 as libFuzzer requires.
@_cdecl("LLVMFuzzerTestOneInput")
func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let outcome = FuzzCheck.check(bytes)
    guard outcome.violations.isEmpty else {
        // A broken promise is a bug as much as a crash: abort so libFuzzer saves the input.
        for violation in outcome.violations {
            let line = Array("JobGraphFuzz violation: \(violation)\n".utf8)
            _ = line.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count) }
        }
        abort()
    }
    return 0
}
#endif
