@testable import Courier
import CourierEngine
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import Synchronization
import Testing

/// A stored body file is replayed as exactly the length its entry (and so the replayed
/// `Content-Length`) says. The lookup checks the file's size when it opens it; a file that
/// then shrinks (truncated on disk while the hit is being sent) must end the response with an
/// error, not with `.finished` after fewer bytes, and one that grows must not send the extra
/// bytes.
@Suite("a stored body replayed")
struct CachedBodyReplayTests {
    typealias Store = HTTPCacheStoreTests

    /// A disk-only cache holding a 300,000-byte body for http://h/big (served as a file, not
    /// from memory), and the body file's path.
    private static func storedLargeBody() throws -> (cache: HTTPCache, directory: URL, body: URL) {
        let directory = try Store.temporaryDirectory()
        let cache = HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory)
        Store.store(cache, Store.entry("http://h/big"), body: Store.bytes(300_000), chunk: 64 << 10)
        let meta = directory.appendingPathComponent("entries")
            .appendingPathComponent(DiskCacheStore.entryName(key: "http://h/big", varied: [:]) + ".meta")
        let bodyID = try JSONDecoder().decode(HTTPCacheHostileStoreTests.Envelope.self, from: Data(contentsOf: meta)).entry.bodyID
        return (cache, directory, directory.appendingPathComponent("bodies").appendingPathComponent(bodyID))
    }

    /// Replays the stored response for http://h/big after `change` ran on its open body file.
    /// `pumped`: with a delivery attached, as every session task has, so the chunks after the
    /// first are read by the pump off the caller's thread (the path a session takes); without
    /// one, everything is read at once on the calling thread.
    private static func replay(pumped: Bool, changing change: (URL) throws -> Void) async throws -> (bytes: Int, last: EngineEvent?) {
        let (cache, directory, body) = try storedLargeBody()
        defer { try? FileManager.default.removeItem(at: directory) }
        var request = EngineRequest(url: try #require(URL(string: "http://h/big")))
        guard case .serve(let exchange) = CachedExchange.prepare(&request, policy: .useProtocolCachePolicy, cache: cache) else {
            Issue.record("the stored response was not served")
            return (0, nil)
        }
        try change(body)
        let events = Mutex<[EngineEvent]>([])
        let record: @Sendable (EngineEvent) -> Void = { event in events.withLock { $0.append(event) } }
        if pumped { exchange.attach(deliver: record) }
        exchange.replay(to: record)
        let ended = {
            events.withLock { all -> Bool in
                switch all.last {
                case .finished?, .failed?: return true
                default: return false
                }
            }
        }
        try await eventually(ended)
        let all = events.withLock { $0 }
        let bytes = all.reduce(0) { total, event in
            if case .bodyPart(let part) = event { return total + part.readableBytes }
            return total
        }
        return (bytes, all.last)
    }

    @Test(arguments: [true, false])
    func aBodyFileTruncatedWhileServedEndsWithAnError(pumped: Bool) async throws {
        let (bytes, last) = try await Self.replay(pumped: pumped) { body in
            #expect(truncate(body.path, 100_000) == 0)
        }
        #expect(bytes <= 100_000)
        guard case .failed(.connectionLost(let reason), _)? = last else {
            Issue.record("ended with \(String(describing: last)) after \(bytes) of 300,000 bytes")
            return
        }
        #expect(reason.contains("300000") || reason.contains("300,000"), "\(reason)")
    }

    @Test(arguments: [true, false])
    func aBodyFileThatGrewWhileServedSendsOnlyItsLength(pumped: Bool) async throws {
        let (bytes, last) = try await Self.replay(pumped: pumped) { body in
            let handle = try FileHandle(forWritingTo: body)
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(repeating: 0xEE, count: 50_000))
            try handle.close()
        }
        #expect(bytes == 300_000)
        guard case .finished? = last else {
            Issue.record("ended with \(String(describing: last))")
            return
        }
    }
}
