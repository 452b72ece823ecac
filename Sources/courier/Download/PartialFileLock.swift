import CourierEngine
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive lock (`flock`) on the file a `-o` download writes (`FILE.part`, or `FILE`
/// resumed in place), held for the run: a second `courier -o FILE` at the same time is refused
/// before anything is sent, instead of writing the same file (each truncating what the other
/// wrote) and renaming it into place. The library opens that file in place (same inode), so the
/// lock covers what it writes.
final class PartialFileLock {
    private let descriptor: Int32
    private let path: String
    /// Whether this lock created the file (an empty one it leaves is removed).
    private let created: Bool

    private init(descriptor: Int32, path: String, created: Bool) {
        self.descriptor = descriptor
        self.path = path
        self.created = created
    }

    /// Locks `url`, creating it empty when missing (mode 0644, never through a symbolic link);
    /// nil when it can't be opened as a regular file (the download refuses it itself, naming why).
    /// - Throws: ``FailureReport`` (exit 2), before anything is sent, when another process holds
    ///   the lock, or when `url` is a symbolic link, a directory or another non-regular file
    ///   (nothing courier wrote; the download would be sent, then refused).
    static func acquire(_ url: URL) throws -> PartialFileLock? {
        var info = stat()
        if lstat(url.path, &info) == 0, info.st_mode & S_IFMT != S_IFREG {
            let kind = info.st_mode & S_IFMT
            let what = kind == S_IFLNK ? "a symbolic link" : kind == S_IFDIR ? "a directory" : "not a regular file"
            throw FailureReport(
                status: .timeoutOrUsage, message: "cannot write to \(url.path): it is \(what); nothing was changed",
                hint: "Remove it, or choose another -o.")
        }
        let existed: Bool
        switch FileStatus(path: url.path) {
        case .regular: existed = true
        case .notRegular: return nil
        case .unavailable: existed = false
        }
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return nil }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            return nil
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            close(descriptor)
            guard busy else { return nil }
            throw FailureReport(
                status: .timeoutOrUsage, message: "another courier is writing \(url.path); nothing was changed",
                hint: "Wait for it to end, or choose another -o.")
        }
        return PartialFileLock(descriptor: descriptor, path: url.path, created: !existed)
    }

    /// Releases the lock; the file is first removed when this lock created it and it is still
    /// empty (an error status, a failed connection: nothing was written), and only while the
    /// path still names it: a failed download removes its empty file, and another courier may
    /// have created and locked a new one there since.
    func release() {
        var held = stat()
        var named = stat()
        if created, fstat(descriptor, &held) == 0, held.st_size == 0, stat(path, &named) == 0,
            named.st_dev == held.st_dev, named.st_ino == held.st_ino
        {
            unlink(path)
        }
        close(descriptor)
    }
}
