#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What a path names, learnt with `stat(2)` (a symbolic link is followed, as `open` follows
/// it) and without opening it: opening acts on some files (a writer blocked on a FIFO is
/// released by a reader's open; a device may act). Foundation's
/// `FileManager.attributesOfItem(atPath:)` answers for a link itself (`lstat`), so through it a
/// link to a file is no regular file and its size is its target's path length.
package enum FileStatus: Equatable, Sendable {
    /// A regular file of `size` bytes.
    case regular(size: Int64)
    /// Something else: a directory, a FIFO, a device, a socket.
    case notRegular
    /// Nothing there, or not reachable (`errno` says why).
    case unavailable(errno: Int32)

    /// What `path` names now.
    package init(path: String) {
        guard !path.utf8.contains(0) else {
            self = .unavailable(errno: ENOENT)
            return
        }
        var info = stat()
        guard stat(path, &info) == 0 else {
            self = .unavailable(errno: errno)
            return
        }
        self = (info.st_mode & S_IFMT) == S_IFREG ? .regular(size: Int64(info.st_size)) : .notRegular
    }
}
