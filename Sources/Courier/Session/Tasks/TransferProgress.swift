/// How far a task's upload or download has come: a `Sendable` value for
/// ``SessionTask/progressUpdates(_:)`` (Foundation's `Progress` is a class that can't cross
/// concurrency domains).
public struct TransferProgress: Sendable, Equatable {
    /// Which half of the exchange.
    public enum Direction: Sendable, Equatable {
        /// The request body.
        case upload
        /// The response body.
        case download
    }

    /// Which half of the exchange this is.
    public let direction: Direction
    /// Bytes moved so far.
    public let completedUnitCount: Int64
    /// Bytes expected in all, or -1 when unknown (no `Content-Length`).
    public let totalUnitCount: Int64

    /// Creates a progress value.
    public init(direction: Direction, completedUnitCount: Int64, totalUnitCount: Int64) {
        self.direction = direction
        self.completedUnitCount = completedUnitCount
        self.totalUnitCount = totalUnitCount
    }

    /// `completed / total` in 0...1; 0 when the total is unknown.
    public var fractionCompleted: Double {
        guard totalUnitCount > 0 else { return 0 }
        return min(1, Double(completedUnitCount) / Double(totalUnitCount))
    }
}
