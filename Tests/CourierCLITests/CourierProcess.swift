import Dispatch
import Foundation
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

/// Runs the built `courier` binary as a subprocess (stdin from /dev/null unless given,
/// stdout and stderr pipes, so it sees no terminal), and waits for it on a Dispatch thread
/// rather than on the cooperative pool. Gives up after 60 s. `environment` entries are set on
/// top of this process's environment (e.g. `["TMPDIR": path]`).
enum CourierProcess {
    static func run(
        _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]
    ) async throws -> CourierRun {
        let process = Process()
        process.executableURL = CourierBinary.url
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
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
