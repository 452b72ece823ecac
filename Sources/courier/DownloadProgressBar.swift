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
        if let line { FileHandle.standardError.write(Data(line.utf8)) }
    }

    /// Ends the bar and prints `Done. <size> in <time> (<rate>)`; the rate counts
    /// `transferredBytes` (the file's size less what a resumed download already had).
    func finish(totalBytes: Int64, transferredBytes: Int64) {
        let drawn = state.withLock { $0.drawn }
        let elapsed = max(Date().timeIntervalSince(start), 0.001)
        let rate = Double(transferredBytes) / elapsed
        let summary = String(
            format: "Done. %@ in %.2fs (%@/s)\n", Self.size(totalBytes), elapsed, Self.size(Int64(rate)))
        FileHandle.standardError.write(Data(((drawn ? "\r\u{1B}[K" : "") + summary).utf8))
    }

    /// One frame: `[#####-----]  45%  28.8 MiB / 64.0 MiB  31.2 MiB/s  ETA 1s`. Pure.
    static func render(done: Int64, total: Int64, initial: Int64, elapsed: TimeInterval) -> String {
        let rate = Double(done - initial) / max(elapsed, 0.001)
        guard total > 0 else {
            return String(format: "%@  %@/s", size(done), size(Int64(rate)))
        }
        let width = 30
        let fraction = min(1, Double(done) / Double(total))
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let eta = rate > 0 ? Double(total - done) / rate : 0
        return String(
            format: "[%@] %3.0f%%  %@ / %@  %@/s  ETA %@",
            bar, fraction * 100, size(done), size(total), size(Int64(rate)), duration(eta))
    }

    /// `812 B`, `12.3 KiB`, `4.5 MiB`, `1.20 GiB`.
    static func size(_ bytes: Int64) -> String {
        let value = Double(bytes)
        switch bytes {
        case ..<1024: return "\(bytes) B"
        case ..<(1 << 20): return String(format: "%.1f KiB", value / 1024)
        case ..<(1 << 30): return String(format: "%.1f MiB", value / 1_048_576)
        default: return String(format: "%.2f GiB", value / 1_073_741_824)
        }
    }

    private static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "?" }
        let whole = Int(seconds.rounded(.up))
        return whole >= 60 ? "\(whole / 60)m\(whole % 60)s" : "\(whole)s"
    }
}
