/// Decides which upload progress counts are reported: at most one per step of bytes (1 % of a
/// known length, at least 64 KiB; 1 MiB for an unknown length) or per interval, and always the
/// first and the last one (the whole announced length). A 256 MiB upload reports about a hundred times, not
/// once per chunk, so callers downstream (the session's callback queue, progress blocks) do not
/// pay a hop per chunk.
///
/// Pure logic: the caller passes the clock (nanoseconds, any monotonic origin).
struct UploadProgressThrottle: Equatable {
    /// The body's announced length, nil when unknown (chunked).
    let expected: Int64?
    /// The byte distance after which a count is reported.
    let step: Int64
    /// The time after which a new count is reported even if `step` was not reached.
    let intervalNanoseconds: UInt64
    /// The last count reported (0 before the first report).
    private(set) var reported: Int64 = 0
    private var reportedAt: UInt64?

    /// The default interval between reports when the step is not reached: 100 ms.
    static let defaultInterval: UInt64 = 100_000_000

    init(expected: Int64?, intervalNanoseconds: UInt64 = Self.defaultInterval) {
        self.expected = expected
        if let expected, expected > 0 {
            step = max(64 * 1024, expected / 100)
        } else {
            step = 1 << 20
        }
        self.intervalNanoseconds = intervalNanoseconds
    }

    /// Whether `sent` (the bytes written so far, growing) is reported now; records it if so.
    /// `final` forces a report of a count not yet reported (the body's end).
    mutating func shouldReport(sent: Int64, now: UInt64, final: Bool = false) -> Bool {
        guard sent > reported || (sent == 0 && final && reportedAt == nil) else { return false }
        let due: Bool
        if final {
            due = true
        } else if let expected, sent >= expected {
            due = true
        } else if sent - reported >= step {
            due = true
        } else if let reportedAt {
            due = now >= reportedAt && now - reportedAt >= intervalNanoseconds
        } else {
            // The first count is reported at once: the caller sees the upload start.
            due = true
        }
        guard due else { return false }
        reported = sent
        reportedAt = now
        return true
    }
}
