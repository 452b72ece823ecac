/// What a `run-one` child reports to the runner: one JSON line on stdout.
struct ChildReport: Codable, Sendable {
    var client: WSClientKind
    var benchCase: WSCase
    /// Sockets open at once (1 for openings).
    var sockets: Int
    /// Timed operations: round trips over every socket, or openings.
    var operations: Int
    /// Echoes checked, untimed first round trips included; the runner compares it with what
    /// the run had to make.
    var echoesChecked: Int
    /// Sockets or openings that failed.
    var errors: Int
    /// The first few errors.
    var errorSamples: [String]
    /// Wall time of the timed part.
    var seconds: Double
    /// getrusage(RUSAGE_SELF) user + system time of the timed part.
    var cpuMicros: Int64
    /// Peak RSS (VmHWM) at the end of the run, KiB.
    var peakRSSKiB: Int64
    /// Peak RSS (VmHWM) before the client was made (binary and runtime alone), KiB.
    var baselineRSSKiB: Int64
    /// The run did not finish within `--timeout`.
    var timedOut: Bool
}
