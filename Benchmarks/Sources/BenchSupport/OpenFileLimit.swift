import Foundation

/// The soft limit on open file descriptors (`RLIMIT_NOFILE`) of this process and, through
/// inheritance, of the children it starts afterwards. Thousands of connections in flight need
/// a descriptor each (plus the runtime's own), far above the usual soft limit of 1,024.
public enum OpenFileLimit {
    /// The current soft and hard limits; nil when `getrlimit` fails.
    public static func current() -> (soft: UInt64, hard: UInt64)? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        return (UInt64(limit.rlim_cur), UInt64(limit.rlim_max))
    }

    /// Raises the soft limit to at least `wanted` descriptors, as far as the hard limit allows
    /// (it never lowers it).
    ///
    /// - Returns: The soft limit in force afterwards (0 when it cannot be read).
    @discardableResult
    public static func raise(to wanted: UInt64) -> UInt64 {
        guard let (soft, hard) = current() else { return 0 }
        guard soft < wanted else { return soft }
        var limit = rlimit()
        limit.rlim_cur = rlim_t(min(wanted, hard))
        limit.rlim_max = rlim_t(hard)
        guard setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return soft }
        return current()?.soft ?? soft
    }
}
