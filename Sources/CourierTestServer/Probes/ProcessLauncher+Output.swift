public import Foundation

extension ProcessLauncher {
    /// Runs the executable at `path` with `arguments` to its end and returns its exit status
    /// and everything it wrote to standard output (and to standard error, mixed in as it came,
    /// when `includingStandardError`; otherwise the child's standard error is this process's).
    ///
    /// Starts the child through ``run(_:)`` (one start at a time) and blocks the calling thread
    /// until the child has closed its output and exited. Throws what `Process.run()` throws when
    /// the child cannot be started.
    public static func runToEnd(
        _ path: String, _ arguments: [String], includingStandardError: Bool
    ) throws -> (status: Int32, output: Data) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        if includingStandardError { process.standardError = pipe }
        try run(process)
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, data)
    }
}
