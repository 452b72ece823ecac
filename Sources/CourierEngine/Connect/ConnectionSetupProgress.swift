import Synchronization

/// The step a connection being opened is in (``ConnectionSetupPhase``), written by the
/// factory and its pipeline as the setup moves on, read by the pool when a request waiting for
/// that connection ends first. Only moves forward.
final class ConnectionSetupProgress: Sendable {
    private let raw = Atomic<UInt8>(ConnectionSetupPhase.resolving.rawValue)

    /// The step the setup is in now.
    var phase: ConnectionSetupPhase { ConnectionSetupPhase(rawValue: raw.load(ordering: .relaxed)) ?? .resolving }

    /// Moves to `phase`, unless the setup is already past it.
    func advance(to phase: ConnectionSetupPhase) {
        _ = raw.max(phase.rawValue, ordering: .relaxed)
    }
}
