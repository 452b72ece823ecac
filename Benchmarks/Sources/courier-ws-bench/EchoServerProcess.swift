import BenchSupport
import Foundation

/// The runner's handle on its `courier-ws-bench serve` child: the URLs and CA it announced, its
/// counters on demand, its CPU time; stopped by closing its stdin.
final class EchoServerProcess {
    let ready: ServerReady
    private let process: Process
    private let input: FileHandle
    private let output: FileHandle
    private var pending: Data

    /// Starts `serve` and waits for its ``ServerReady`` line.
    init(scratch: String) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: currentExecutablePath)
        process.arguments = ["serve", "--scratch", scratch]
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        input = stdin.fileHandleForWriting
        output = stdout.fileHandleForReading
        var buffered = Data()
        let line = try Self.readLine(output, &buffered)
        ready = try JSONDecoder().decode(ServerReady.self, from: line)
        pending = buffered
    }

    /// The server's process id (its CPU is the benchmark's, not another process's).
    var pid: Int32 { process.processIdentifier }

    /// CPU seconds the server used so far.
    var cpuSeconds: Double { processCPUSeconds(pid: pid) }

    /// The server's counters now.
    func stats() throws -> ServerStats {
        try input.write(contentsOf: Data("stats\n".utf8))
        return try JSONDecoder().decode(ServerStats.self, from: Self.readLine(output, &pending))
    }

    /// Ends the server (EOF on its stdin) and waits for it.
    func stop() {
        try? input.close()
        process.waitUntilExit()
    }

    /// The serve process ended its output (it exited or crashed).
    struct Gone: Error, CustomStringConvertible {
        var description: String { "the echo server process ended" }
    }

    /// The next line of `handle` (blocking), without its newline.
    private static func readLine(_ handle: FileHandle, _ pending: inout Data) throws -> Data {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Data(pending[pending.startIndex..<newline])
                pending = Data(pending[(newline + 1)...])
                return line
            }
            let chunk = handle.availableData
            guard !chunk.isEmpty else { throw Gone() }
            pending.append(chunk)
        }
    }
}
