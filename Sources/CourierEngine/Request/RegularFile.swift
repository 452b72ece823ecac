#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Opens a path for reading only when it names a regular file, the one way every reader of a
/// caller's or a file system's path does it. What the path names is learnt first without
/// opening it (``FileStatus``: opening acts on some files — a writer blocked on a FIFO is
/// released, a device may act); the open never blocks (a FIFO swapped in meanwhile can't hold
/// the thread) and never takes a controlling terminal; the descriptor is then checked again,
/// so what is checked is what is read even if the path changes in between. A symbolic link is
/// followed.
package enum RegularFile {
    /// Why a path was not opened.
    package enum Refusal: Error, Equatable {
        /// The path holds a NUL byte: `open` would take it cut there, naming another file.
        case nulInPath
        /// It names a directory, FIFO, device or socket.
        case notRegular
        /// `open` or `fstat` failed with `errno` (ENOENT: nothing there).
        case unavailable(errno: Int32)
    }

    /// Which file a path named when it was opened, and its size then. The change time is part
    /// of it: a file system reuses a freed inode number at once (tmpfs does), so a file made
    /// in a deleted one's place can have its device and inode.
    package struct Identity: Sendable, Equatable {
        package let device: UInt64
        package let inode: UInt64
        package let changeSeconds: Int64
        package let changeNanoseconds: Int64
        package let size: Int64

        /// Whether `other` is the same file (device and inode), whatever its size or change
        /// time now: a path replaced by another file, or by a link to one, is not.
        package func isSameFile(as other: Identity) -> Bool {
            device == other.device && inode == other.inode
        }
    }

    /// A regular file opened for reading: its descriptor (the caller closes it) and which file
    /// `fstat` said it is, through that descriptor.
    package struct Opened: Sendable {
        package let descriptor: Int32
        package let identity: Identity
        package var size: Int64 { identity.size }
    }

    /// The regular file `path` names now, opened for reading.
    package static func open(_ path: String) throws(Refusal) -> Opened {
        guard !path.utf8.contains(0) else { throw .nulInPath }
        if FileStatus(path: path) == .notRegular { throw .notRegular }
        let descriptor = openForReading(path)
        guard descriptor >= 0 else { throw .unavailable(errno: errno) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let code = errno
            close(descriptor)
            throw .unavailable(errno: code)
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw .notRegular
        }
        // Regular files ignore O_NONBLOCK; cleared so later reads are plainly blocking ones.
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        #if canImport(Darwin)
        let changed = status.st_ctimespec
        #else
        let changed = status.st_ctim
        #endif
        let identity = Identity(
            device: UInt64(status.st_dev), inode: UInt64(status.st_ino), changeSeconds: Int64(changed.tv_sec),
            changeNanoseconds: Int64(changed.tv_nsec), size: Int64(status.st_size))
        return Opened(descriptor: descriptor, identity: identity)
    }
}

/// `open(2)` for ``RegularFile/open(_:)`` (whose own name hides the system's inside it).
private func openForReading(_ path: String) -> Int32 {
    open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
}
