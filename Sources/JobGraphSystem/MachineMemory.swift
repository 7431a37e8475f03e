import Glibc

/// The machine's memory, the default total of `resources: {mem: …}`.
public enum MachineMemory {
    /// Bytes of physical memory (`/proc/meminfo`'s MemTotal, as the kernel's sysinfo counts it); `nil` if unknown.
    public static var total: Int64? {
        let pages = sysconf(Int32(_SC_PHYS_PAGES)), size = sysconf(Int32(_SC_PAGESIZE))
        guard pages > 0, size > 0 else { return nil }
        return Int64(pages).multipliedReportingOverflow(by: Int64(size)).overflow ? nil : Int64(pages) * Int64(size)
    }
}
