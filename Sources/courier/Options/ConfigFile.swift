import CourierEngine
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `courier`'s configuration folder and its `config.json` (HTTPie's): `{"default_options":
/// ["--verify=no", ...]}` are put before the options typed, so a typed option wins (the last
/// value of an option is the one used).
enum ConfigFile {
    /// `$COURIER_CONFIG_DIR` (HTTPie's `$HTTPIE_CONFIG_DIR`), else `$XDG_CONFIG_HOME/courier`,
    /// else `~/.config/courier`.
    static func directory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let explicit = environment["COURIER_CONFIG_DIR"], !explicit.isEmpty {
            return URL(fileURLWithPath: explicit)
        }
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg).appendingPathComponent("courier")
        }
        let home = environment["HOME"].map { URL(fileURLWithPath: $0) } ?? FileManager.default.homeDirectoryForCurrentUser
        return home.appendingPathComponent(".config").appendingPathComponent("courier")
    }

    /// The file's shape.
    private struct Contents: Decodable {
        var default_options: [String]?
    }

    /// The default options in `config.json` of `directory`; none when there is no file.
    /// - Throws: ``RequestBuildError`` naming the file when it is not such a JSON object.
    static func defaultOptions(in directory: URL) throws -> [String] {
        let file = directory.appendingPathComponent("config.json")
        guard let data = try smallFile(file, what: "the config file") else { return [] }
        do {
            return try JSONDecoder().decode(Contents.self, from: data).default_options ?? []
        } catch {
            throw RequestBuildError(
                description: "the config file \(file.path) is not valid: expected {\"default_options\": [\"--option\", ...]} (\(error))")
        }
    }

    /// The command line to parse: for a request (no other subcommand named first), `defaults`
    /// and, when run as `courier-https`, `--https`, go before the typed arguments (after an
    /// explicit `request`). Pure.
    static func arguments(_ typed: [String], defaults: [String], https: Bool, otherSubcommands: Set<String>) -> [String] {
        let added = defaults + (https ? ["--https"] : [])
        guard !added.isEmpty else { return typed }
        if let first = typed.first {
            if otherSubcommands.contains(first) || first == "--help" || first == "help" || first == "--version" {
                return typed
            }
            if first == "request" { return [first] + added + typed.dropFirst() }
        }
        return added + typed
    }

    /// The largest config or session file read: 16 MiB.
    static let maximumFileSize = 16 << 20

    /// The bytes of `file` (a symlink is followed); nil when there is none. Read once, from a
    /// regular file of at most ``maximumFileSize`` bytes, so a FIFO, a device or a huge file
    /// can't hang courier or take its memory. What the path names is checked before it is
    /// opened (opening a FIFO releases a writer blocked on it, opening a device may act on it),
    /// and the descriptor after (the path may have changed in between).
    /// - Throws: ``RequestBuildError`` naming `what` and the file.
    static func smallFile(_ file: URL, what: String) throws -> Data? {
        let opened: RegularFile.Opened
        do {
            opened = try RegularFile.open(file.path)
        } catch .unavailable(let code) where code == ENOENT || code == ENOTDIR {
            return nil  // COURIER_CONFIG_DIR may name a file: no config
        } catch .unavailable(let code) {
            throw RequestBuildError(description: "\(what) \(file.path) can't be read: \(String(cString: strerror(code)))")
        } catch .notRegular {
            throw RequestBuildError(description: "\(what) \(file.path) is not a regular file")
        } catch {
            throw RequestBuildError(description: "\(what) \(file.path.debugDescription) can't be read: its path holds a NUL byte")
        }
        let handle = FileHandle(fileDescriptor: opened.descriptor, closeOnDealloc: true)
        guard opened.size <= maximumFileSize else {
            throw RequestBuildError(description: "\(what) \(file.path) is larger than \(maximumFileSize) bytes")
        }
        do {
            let data = try handle.read(upToCount: maximumFileSize + 1) ?? Data()
            guard data.count <= maximumFileSize else {
                throw RequestBuildError(description: "\(what) \(file.path) is larger than \(maximumFileSize) bytes")
            }
            return data
        } catch let error as RequestBuildError {
            throw error
        } catch {
            throw RequestBuildError(description: "\(what) \(file.path) can't be read: \(error)")
        }
    }
}
