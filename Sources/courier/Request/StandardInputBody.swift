import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// HTTPie's redirected input: standard input is the body when it is a pipe or a regular file
/// (`cmd | courier URL`, `courier URL < file`) and not ignored (`-I`); a terminal, `/dev/null`
/// (a character device) or a socket gives no body. The rule is pure; ``read()`` does the I/O.
enum StandardInputBody {
    /// What standard input is.
    enum Kind: Equatable {
        case terminal
        case pipe
        case regularFile
        /// A character device (`/dev/null`), a socket, or stdin closed.
        case other
    }

    /// The kind of file descriptor 0.
    static func currentKind() -> Kind {
        if isatty(STDIN_FILENO) == 1 { return .terminal }
        var status = stat()
        guard fstat(STDIN_FILENO, &status) == 0 else { return .other }
        switch status.st_mode & S_IFMT {
        case S_IFIFO: return .pipe
        case S_IFREG: return .regularFile
        default: return .other
        }
    }

    /// Whether the body comes from standard input.
    static func isUsed(kind: Kind, ignored: Bool) -> Bool {
        !ignored && (kind == .pipe || kind == .regularFile)
    }

    /// The message for a body from stdin (or `--raw`) together with data items (exit 2).
    static func mixedMessage(source: String) -> String {
        "the body from \(source) and data items (name=value, name:=json, field@file, @file) can't be combined; "
            + (source == "stdin" ? "use -I/--ignore-stdin to leave stdin unread, or drop the data items" : "drop one of them")
    }

    /// `courier URL < file`: the file behind stdin (its own path) and its length, so it can be
    /// streamed like an `@file` body, when stdin is a regular file read from its start and not
    /// ignored; nil otherwise (a pipe is read with ``read()``).
    static func regularFileAtStart(ignored: Bool) -> (url: URL, length: Int64)? {
        guard !ignored, currentKind() == .regularFile else { return nil }
        var status = stat()
        guard fstat(STDIN_FILENO, &status) == 0, lseek(STDIN_FILENO, 0, SEEK_CUR) == 0,
            let resolved = realpath("/proc/self/fd/0", nil)
        else { return nil }
        defer { free(resolved) }
        // The file's own path (a length read from the /dev/stdin link would be the link's).
        let path = String(cString: resolved)
        var check = stat()
        guard path.hasPrefix("/"), stat(path, &check) == 0, check.st_ino == status.st_ino, check.st_dev == status.st_dev
        else { return nil }
        return (URL(fileURLWithPath: path), Int64(status.st_size))
    }

    /// Reads standard input to its end.
    /// - Throws: ``RequestBuildError`` when it can't be read.
    static func read() throws -> Data {
        do {
            return try FileHandle.standardInput.readToEnd() ?? Data()
        } catch {
            throw RequestBuildError(description: "cannot read the body from stdin: \(error)")
        }
    }
}
