import Glibc

/// This process's limit on open descriptors (`RLIMIT_NOFILE`).
public enum DescriptorLimit {
    /// `RLIMIT_NOFILE` as `getrlimit` takes it (Glibc imports the constant as an enum case).
    public static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)

    /// The soft limit `raise()` asks for, when the hard limit allows it.
    public static let wanted: rlim_t = 4096

    /// Raises the soft limit to `wanted` (or to the hard limit, when that is lower); a higher soft limit is
    /// left alone. Returns the soft limit in force afterwards, `nil` when it cannot be read.
    ///
    /// Why: every task running here holds three descriptors (its output pipe's two ends and its pidfd), so
    /// the usual soft limit of 1,024 would refuse the spawns of `--jobs` above about 330. Not higher: the
    /// children inherit the limit, and some programs close every descriptor up to it before they start.
    @discardableResult
    public static func raise() -> rlim_t? {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return nil }
        let target = min(wanted, limit.rlim_max)
        guard limit.rlim_cur < target else { return limit.rlim_cur }
        var raised = limit
        raised.rlim_cur = target
        return setrlimit(resource, &raised) == 0 ? target : limit.rlim_cur
    }
}
