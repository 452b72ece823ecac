import Dispatch
import CourierTestServer
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Testing

/// What one run of the `courier` binary produced.
struct CourierRun: CustomStringConvertible {
    var status: Int32
    var stdout: Data
    var stderr: Data

    var output: String { String(decoding: stdout, as: UTF8.self) }
    var errors: String { String(decoding: stderr, as: UTF8.self) }

    /// The stdout body parsed as a JSON object (the test server's echo).
    func json() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: stdout) as? [String: Any] else {
            throw CLITestFailure("stdout is not a JSON object: \(output)")
        }
        return object
    }

    var description: String { "exit \(status)\n--- stdout\n\(output)\n--- stderr\n\(errors)" }
}

struct CLITestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// What a `courier` child reads on standard input.
enum StandardInput {
    /// `/dev/null` (a character device: no body).
    case null
    /// A pipe carrying these bytes, then end of file.
    case pipe(Data)
    /// A regular file, redirected (`courier ... < file`).
    case file(URL)
}

/// Runs the built `courier` binary as a subprocess (stdin from /dev/null unless given,
/// stdout and stderr pipes, so it sees no terminal), and waits for it on a Dispatch thread
/// rather than on the cooperative pool. Gives up after 60 s. `environment` entries are set on
/// top of this process's environment (e.g. `["TMPDIR": path]`). `executable` runs another
/// built product (`courier-https`) instead of `courier`.
enum CourierProcess {
    static func run(
        _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:],
        stdin: StandardInput = .null, executable: URL? = nil
    ) async throws -> CourierRun {
        let process = Process()
        process.executableURL = executable ?? CourierBinary.url
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        var input: Pipe?
        switch stdin {
        case .null: process.standardInput = FileHandle.nullDevice
        case .pipe:
            // A child that exits without reading must give this process EPIPE, not SIGPIPE.
            signal(SIGPIPE, SIG_IGN)
            input = Pipe()
            process.standardInput = input
        case .file(let url): process.standardInput = try FileHandle(forReadingFrom: url)
        }
        try ProcessLauncher.run(process)
        if case .pipe(let data) = stdin, let input {
            // Written on its own thread (a large body can fill the pipe before courier reads it).
            DispatchQueue.global().async {
                try? input.fileHandleForWriting.write(contentsOf: data)
                try? input.fileHandleForWriting.close()
            }
        }
        let watchdog = DispatchWorkItem { process.terminate() }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
        let run = await withCheckedContinuation { (continuation: CheckedContinuation<CourierRun, Never>) in
            DispatchQueue.global().async {
                // Both pipes are drained at once, so a full stderr pipe can't block the child.
                let group = DispatchGroup()
                let stdout = Mutex(Data())
                group.enter()
                DispatchQueue.global().async {
                    let data = out.fileHandleForReading.readDataToEndOfFile()
                    stdout.withLock { $0 = data }
                    group.leave()
                }
                let stderr = err.fileHandleForReading.readDataToEndOfFile()
                group.wait()
                process.waitUntilExit()
                continuation.resume(
                    returning: CourierRun(
                        status: process.terminationStatus, stdout: stdout.withLock { $0 }, stderr: stderr))
            }
        }
        watchdog.cancel()
        return run
    }

    /// A fresh temporary directory.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
