import Foundation
import NIOCore

/// What one socket does, handed to ``EchoClient/run(_:_:)``: round trip 0 (untimed), then — after
/// ``EchoTiming/arrive(_:)`` when the run is timed per round trip — round trips 1 through
/// `roundTrips`, each one message sent, its echo awaited and checked before the next is sent;
/// then ``EchoTiming/leave(_:)``. Then the client closes the socket with 1000.
struct EchoScript: Sendable {
    let payload: EchoPayload
    /// This socket's number (in the messages' stamps).
    let socket: Int
    /// Timed round trips after the first.
    let roundTrips: Int
    /// The start line of an echo run; nil for openings (the run is timed as a whole).
    let timing: EchoTiming?
    /// Counts the echoes checked in the whole run.
    let tally: EchoTally

    /// Message `index` as a ByteBuffer.
    func buffer(_ index: Int) -> ByteBuffer { payload.buffer(socket: socket, index: index) }

    /// Message `index` as Data.
    func data(_ index: Int) -> Data { payload.data(socket: socket, index: index) }

    /// Checks that `echo` is message `index` and counts it.
    func check(_ echo: ByteBuffer, _ index: Int) throws {
        try payload.check(echo, socket: socket, index: index)
        tally.count()
    }

    /// Checks that `echo` is message `index` and counts it.
    func check(_ echo: Data, _ index: Int) throws {
        try payload.check(echo, socket: socket, index: index)
        tally.count()
    }

    /// The script for clients with an async send and receive: `roundTrip(index)` sends message
    /// `index`, receives and checks its echo.
    func play(_ roundTrip: (Int) async throws -> Void) async throws {
        try await roundTrip(0)
        await timing?.arrive(socket)
        if roundTrips > 0 {
            for index in 1...roundTrips { try await roundTrip(index) }
        }
        timing?.leave(socket)
    }
}
