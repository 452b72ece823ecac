// Courier's public API hands out engine types: `SessionConfiguration.tls`
// (`EngineTLSConfiguration`) and `.proxy` (`EngineProxy`), task metrics (`EngineMetrics`),
// request bodies for uploads and `bytes(for:body:)` (`RequestBody`, `BodyWriter`), and the
// engine's errors inside `CourierError.engine` (`EngineError`). A user of the AFNetworking
// layer should reach all of them with `import Courier` alone, as AFNetworking users never
// import the URL loading system's internals. Re-exporting the engine module does that without
// a second name for each type (a typealias with the same name would make every file that also
// imports CourierEngine ambiguous; one with another name would give each type two names).
//
// The engine's own API (`HTTPEngine`, `EngineRequest`, ...) becomes visible too; it is a
// public product anyway, and every one of its names starts with `Engine` or says what it is.
@_exported public import CourierEngine
public import Foundation
import NIOCore

extension BodyWriter {
    /// Sends `data` as one chunk of a streamed body (`RequestBody.stream(length:_:)`);
    /// suspends until the connection can take more. The `Data` form of `write(_:)` for code
    /// that does not use NIO's `ByteBuffer`. Throws when the request has failed or was
    /// cancelled.
    public func write(_ data: Data) async throws {
        try await write(ByteBuffer(bytes: data))
    }

    /// Sends `bytes` as one chunk of a streamed body; as the `Data` form.
    public func write(contentsOf bytes: [UInt8]) async throws {
        try await write(ByteBuffer(bytes: bytes))
    }
}

extension RequestBody {
    /// A body made of an async sequence's `Data` chunks, sent as they come (each waits until
    /// the connection can take more). With a `length`, the request carries `Content-Length`
    /// and the chunks must add up to it exactly; without, it is sent chunked. The `Data` form
    /// of ``sequence(_:length:)`` for code that does not use NIO's `ByteBuffer`. Consumed
    /// once: `isReplayable` is false.
    public static func sequence<S: AsyncSequence & Sendable>(
        _ sequence: S,
        length: Int64?
    ) -> RequestBody where S.Element == Data {
        .stream(length: length) { writer in
            for try await chunk in sequence {
                try await writer.write(ByteBuffer(bytes: chunk))
            }
        }
    }
}
