#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The file-system steps of a download, done without following a symbolic link in the last
/// path component and without ever deleting anything but a regular file:
/// what is at a path, opening a partial file at an offset, and moving a finished file into
/// place with `rename(2)` (atomic; it can't replace a directory).
enum DownloadFileSystem {
    /// What a path names, seen with `lstat` (a symbolic link is not followed).
    enum Kind: Equatable {
        case missing
        case regularFile(size: Int64)
        case directory
        case symbolicLink
        /// A device, FIFO or socket.
        case other
        /// `lstat` failed for another reason than a missing file.
        case unreadable(String)
    }

    static func kind(atPath path: String) -> Kind {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let code = errno
            return code == ENOENT ? .missing : .unreadable(String(cString: strerror(code)))
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .regularFile(size: Int64(info.st_size))
        case S_IFDIR: return .directory
        case S_IFLNK: return .symbolicLink
        default: return .other
        }
    }

    /// Why a download may not write or replace `path`, or nil when it may (a regular file, or
    /// nothing there yet whose folder exists).
    static func problem(withPath path: String) -> String? {
        switch kind(atPath: path) {
        case .regularFile: return nil
        case .directory: return "\(path) is a directory"
        case .symbolicLink: return "\(path) is a symbolic link"
        case .other: return "\(path) is not a regular file"
        case .unreadable(let reason): return "\(path) can't be inspected: \(reason)"
        case .missing:
            // The folder may itself be a link to a folder: that is fine.
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue { return nil }
            return "the folder of \(path) does not exist"
        }
    }

    /// Opens `path` for writing from `offset`: creates it when missing, refuses anything that is
    /// not a regular file (a symbolic link is not followed, a FIFO doesn't block), refuses a file
    /// shorter than `offset`, and cuts what lies after `offset` (0: the file starts over).
    static func openForWriting(path: String, offset: Int64, exclusive: Bool = false) throws -> FileHandle {
        var flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC
        if exclusive { flags |= O_EXCL }
        let descriptor = open(path, flags, 0o644)
        guard descriptor >= 0 else {
            let code = errno
            let reason: String
            if code == ELOOP {
                reason = "it is a symbolic link"
            } else if let problem = problem(withPath: path) {
                reason = problem
            } else {
                reason = String(cString: strerror(code))
            }
            throw CourierError.cannotWriteDownloadFile(path: path, reason: reason)
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw CourierError.cannotWriteDownloadFile(path: path, reason: "not a regular file")
        }
        guard Int64(info.st_size) >= offset else {
            throw CourierError.cannotWriteDownloadFile(
                path: path, reason: "the file holds \(info.st_size) bytes, fewer than the resume offset \(offset)")
        }
        // Cut only a file that is longer: on ext4, truncating even an empty file to 0 makes its
        // close flush every page written since (the replace-by-truncate safeguard), which cost
        // a 256 MiB download ~100 ms at its end.
        let cut = Int64(info.st_size) == offset || ftruncate(descriptor, off_t(offset)) == 0
        guard cut, lseek(descriptor, off_t(offset), SEEK_SET) == off_t(offset) else {
            throw CourierError.cannotWriteDownloadFile(path: path, reason: String(cString: strerror(errno)))
        }
        return handle
    }

    /// Moves `source` to `destination`, replacing only a regular file there, atomically with
    /// `rename(2)`; across file systems, through a copy beside the destination renamed over it.
    /// A directory, a symbolic link or anything else at `destination` is an error and nothing
    /// is deleted or changed.
    static func replace(_ destination: URL, with source: URL) throws {
        if let problem = problem(withPath: destination.path) {
            throw CourierError.cannotMoveDownloadedFile(from: source, to: destination, reason: "\(problem); nothing was replaced")
        }
        if rename(source.path, destination.path) == 0 { return }
        let code = errno
        guard code == EXDEV else {
            throw CourierError.cannotMoveDownloadedFile(from: source, to: destination, reason: String(cString: strerror(code)))
        }
        // Another file system: copy beside the destination, then rename over it.
        let folder = destination.deletingLastPathComponent()
        let copy = folder.appendingPathComponent(".\(destination.lastPathComponent).courier-\(UUID().uuidString)")
        do {
            try FileManager.default.copyItem(at: source, to: copy)
        } catch {
            try? FileManager.default.removeItem(at: copy)
            throw CourierError.cannotMoveDownloadedFile(from: source, to: destination, reason: "\(error)")
        }
        guard rename(copy.path, destination.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: copy)
            throw CourierError.cannotMoveDownloadedFile(from: source, to: destination, reason: reason)
        }
        try? FileManager.default.removeItem(at: source)
    }
}
