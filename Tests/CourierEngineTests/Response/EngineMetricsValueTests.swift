import Foundation
import Testing

@testable import CourierEngine

/// `EngineMetrics` keeps its values in one copy-on-write box: it must still behave as a plain
/// value, whichever property is written.
@Suite("EngineMetrics is a value")
struct EngineMetricsValueTests {
    /// One write per property, each to a value other than the default.
    static let writes: [(name: String, write: @Sendable (inout EngineMetrics) -> Void)] = {
        let date = Date(timeIntervalSince1970: 1_000)
        return [
            ("fetchStart", { $0.fetchStart = date }),
            ("domainLookupStart", { $0.domainLookupStart = date }),
            ("domainLookupEnd", { $0.domainLookupEnd = date }),
            ("connectStart", { $0.connectStart = date }),
            ("connectEnd", { $0.connectEnd = date }),
            ("secureConnectionStart", { $0.secureConnectionStart = date }),
            ("secureConnectionEnd", { $0.secureConnectionEnd = date }),
            ("requestStart", { $0.requestStart = date }),
            ("requestEnd", { $0.requestEnd = date }),
            ("responseStart", { $0.responseStart = date }),
            ("responseEnd", { $0.responseEnd = date }),
            ("requestHeaderBytesSent", { $0.requestHeaderBytesSent += 7 }),
            ("requestBodyBytesSent", { $0.requestBodyBytesSent += 7 }),
            ("responseHeaderBytesReceived", { $0.responseHeaderBytesReceived += 7 }),
            ("responseBodyBytesReceived", { $0.responseBodyBytesReceived += 7 }),
            ("isReusedConnection", { $0.isReusedConnection = true }),
            ("localAddress", { $0.localAddress = "127.0.0.1" }),
            ("localPort", { $0.localPort = 1 }),
            ("remoteAddress", { $0.remoteAddress = "::1" }),
            ("remotePort", { $0.remotePort = 2 }),
            ("networkProtocolName", { $0.networkProtocolName = "h2" }),
            ("tlsProtocolVersion", { $0.tlsProtocolVersion = "TLSv1.3" }),
            ("resourceFetchType", { $0.resourceFetchType = .localCache }),
            ("revalidatedFromCache", { $0.revalidatedFromCache = true }),
        ]
    }()

    @Test("a write through any property leaves every copy as it was, and equal values in separate boxes are equal")
    func everyPropertyIsCopiedOnWrite() {
        let start = Date(timeIntervalSince1970: 0)
        for (name, write) in Self.writes {
            let original = EngineMetrics(fetchStart: start)
            var changed = original
            #expect(changed == original, "\(name): a copy equals its original")
            write(&changed)
            #expect(changed != original, "\(name): the write is seen")
            #expect(original == EngineMetrics(fetchStart: start), "\(name): the write reached the copy it came from")
            var again = EngineMetrics(fetchStart: start)
            write(&again)
            #expect(again == changed, "\(name): the same values in separate boxes")
            var twice = changed
            write(&twice)
            if name.hasSuffix("Sent") || name.hasSuffix("Received") {
                #expect(changed == again, "\(name): a second write to a copy left the first alone")
            }
        }
    }
}
