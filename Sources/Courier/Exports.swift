// The engine vocabulary that Courier's own public signatures use, re-exported by name, so an
// AFNetworking-layer user needs `import Courier` alone: `SessionConfiguration.tls`
// (`EngineTLSConfiguration`), `.proxy` and `.proxyEnvironment` (`EngineProxy`,
// `ProxyEnvironment`), `.httpVersion` (`EngineConfiguration.HTTPVersionPolicy`), task metrics
// (`EngineMetrics`), request bodies for uploads and `bytes(for:body:)` (`RequestBody`,
// `BodyWriter`, and `ContentCoding` for `RequestCompressor`), and the engine's errors inside `CourierError.engine` (`EngineError`, whose
// proxy case carries a `ProxyRefusal`), and WebSockets' close codes, errors and compression
// parameters (`WebSocketCloseCode`, `WebSocketError`, `PerMessageDeflate`), and name resolution
// (`.hostResolver`, `.resolveOverrides`, `.connectToOverrides`: `HostResolver`,
// `SystemHostResolver`, `ResolveOverride`, `ConnectToOverride`, `HostOverrideError`). The engine itself (`HTTPEngine`, `EngineRequest`,
// `EngineEvent`, its collected and streamed responses) stays behind `import CourierEngine`,
// as Hummingbird re-exports only the core types its users need.
@_exported public import struct CourierEngine.BodyWriter
@_exported public import enum CourierEngine.ContentCoding
@_exported public import struct CourierEngine.EngineConfiguration
@_exported public import enum CourierEngine.EngineError
@_exported public import struct CourierEngine.EngineMetrics
@_exported public import struct CourierEngine.EngineProxy
@_exported public import struct CourierEngine.EngineTLSConfiguration
@_exported public import struct CourierEngine.ProxyEnvironment
@_exported public import enum CourierEngine.ProxyRefusal
@_exported public import struct CourierEngine.RequestBody
@_exported public import enum CourierEngine.WebSocketCloseCode
@_exported public import enum CourierEngine.WebSocketError
@_exported public import struct CourierEngine.PerMessageDeflate
@_exported public import protocol CourierEngine.HostResolver
@_exported public import struct CourierEngine.SystemHostResolver
@_exported public import struct CourierEngine.ResolveOverride
@_exported public import struct CourierEngine.ConnectToOverride
@_exported public import struct CourierEngine.HostOverrideError
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
