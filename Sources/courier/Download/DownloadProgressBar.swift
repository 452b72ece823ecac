import Foundation
import Synchronization

/// The `--download` progress bar on stderr: bytes, percentage, rate and ETA, redrawn in place
/// at most 20 times a second. Drawn only when stderr is a terminal (logs stay clean); the
/// summary line is printed either way.
final class DownloadProgressBar: Sendable {
    private struct State {
        var lastDraw = Date.distantPast
        var drawn = false
    }

    private let start = Date()
    private let initialBytes: Int64
    private let isTerminal: Bool
    private let state = Mutex(State())

    /// - Parameters:
    ///   - initialBytes: bytes already on disk (a resumed download); the rate counts only new ones.
    ///   - isTerminal: whether to draw; defaults to whether stderr is a terminal.
    init(initialBytes: Int64 = 0, isTerminal: Bool = isatty(STDERR_FILENO) == 1) {
        self.initialBytes = initialBytes
        self.isTerminal = isTerminal
    }

    /// Reports progress (any thread): `done` of `total` bytes (total ≤ 0: unknown).
    func update(done: Int64, total: Int64) {
        guard isTerminal else { return }
        let now = Date()
        let line: String? = state.withLock { state in
            guard now.timeIntervalSince(state.lastDraw) >= 0.05 || (total > 0 && done >= total) else { return nil }
            state.lastDraw = now
            state.drawn = true
            return "\r" + Self.render(done: done, total: total, initial: initialBytes, elapsed: now.timeIntervalSince(start))
                + "\u{1B}[K"
        }
        if let line { StandardStreams.writeError(Data(line.utf8)) }
    }

    /// Ends the bar and prints `Done. <size> in <time> (<rate>)`; the rate counts
    /// `transferredBytes` (the file's size less what a resumed download already had).
    func finish(totalBytes: Int64, transferredBytes: Int64) {
        let drawn = state.withLock { $0.drawn }
        let summary = Self.summary(
            totalBytes: totalBytes, transferredBytes: transferredBytes, elapsed: Date().timeIntervalSince(start))
        StandardStreams.writeError(Data(((drawn ? "\r\u{1B}[K" : "") + summary).utf8))
    }

    /// The summary line, `Done. 64.0 MiB in 2.05s (31.2 MiB/s)\n`. Pure; any values (negative,
    /// `Int64.max`, no time at all) give a line, never a trap.
    static func summary(totalBytes: Int64, transferredBytes: Int64, elapsed: TimeInterval) -> String {
        let seconds = elapsed.isFinite ? max(elapsed, 0) : 0
        let speed = Double(max(transferredBytes, 0)) / max(seconds, 0.001)
        return String(format: "Done. %@ in %.2fs (%@)\n", size(totalBytes), seconds, rate(speed))
    }

    /// One frame: `[#####-----]  45%  28.8 MiB / 64.0 MiB  31.2 MiB/s  ETA 1s`. Pure: lengths
    /// come from the server and may be anything, so the arithmetic is done in `Double` (no
    /// overflow) and clamped before it becomes a count; negative values count as 0.
    static func render(done: Int64, total: Int64, initial: Int64, elapsed: TimeInterval) -> String {
        let done = max(done, 0)
        let seconds = elapsed.isFinite ? max(elapsed, 0.001) : 0.001
        let speed = max(Double(done) - Double(max(initial, 0)), 0) / seconds
        guard total > 0 else {
            return "\(size(done))  \(rate(speed))"
        }
        let width = 30
        let fraction = min(1, Double(done) / Double(total))
        let filled = min(max(Int((fraction * Double(width)).rounded(.down)), 0), width)
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let remaining = max(Double(total) - Double(done), 0)
        let eta: Double? = remaining == 0 ? 0 : speed > 0 ? remaining / speed : nil
        return String(
            format: "[%@] %3.0f%%  %@ / %@  %@  ETA %@",
            bar, fraction * 100, size(done), size(total), rate(speed), duration(eta))
    }

    /// `812 B`, `12.3 KiB`, `4.5 MiB`, `1.20 GiB`, `3.00 TiB`, … `8.00 EiB` (`Int64.max`);
    /// negative values read `0 B`.
    static func size(_ bytes: Int64) -> String {
        format(Double(max(bytes, 0)))
    }

    /// A rate, `31.2 MiB/s`; any `Double` (beyond `Int64` too); not finite or negative: `? B/s`.
    static func rate(_ bytesPerSecond: Double) -> String {
        guard bytesPerSecond.isFinite, bytesPerSecond >= 0 else { return "? B/s" }
        return format(bytesPerSecond) + "/s"
    }

    private static func format(_ value: Double) -> String {
        let units: [(String, Double)] = [("EiB", 0x1p60), ("PiB", 0x1p50), ("TiB", 0x1p40), ("GiB", 0x1p30)]
        if value >= 0x1p70 { return String(format: "%.0f EiB", value / 0x1p60) }
        for (name, scale) in units where value >= scale {
            return String(format: "%.2f %@", value / scale, name)
        }
        if value >= 0x1p20 { return String(format: "%.1f MiB", value / 0x1p20) }
        if value >= 1024 { return String(format: "%.1f KiB", value / 1024) }
        return "\(Int(value)) B"
    }

    /// `42s`, `3m7s`, `5h12m`; beyond 99 days `>99d`; unknown (nil, not finite) `?`.
    private static func duration(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite, seconds >= 0 else { return "?" }
        guard seconds <= 99 * 86_400 else { return ">99d" }
        let whole = Int(seconds.rounded(.up))
        if whole >= 3600 { return "\(whole / 3600)h\(whole % 3600 / 60)m" }
        return whole >= 60 ? "\(whole / 60)m\(whole % 60)s" : "\(whole)s"
    }
}
