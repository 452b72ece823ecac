import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The values of `-w/--write-out`'s variables for one call, as curl gives them: times in
/// seconds (six decimals) from the start of the call to the end of each phase of its last
/// exchange (0 for a phase that did not happen: DNS for an IP literal, connect and TLS on a
/// reused connection), sizes in bytes, `http_code` 000 when no response came.
enum WriteOutValues {
    /// The values for a call that started at `start` and ended now with `exchange`, after
    /// `redirects` redirects.
    static func make(
        start: Date, end: Date = Date(), response: HTTPURLResponse?, metrics: EngineMetrics?, redirects: Int
    ) -> [WriteOutFormat.Variable: String] {
        func seconds(_ date: Date?) -> String {
            guard let date else { return "0.000000" }
            return String(format: "%.6f", max(0, date.timeIntervalSince(start)))
        }
        let code = response.map { String(format: "%03d", $0.statusCode) } ?? "000"
        return [
            .httpCode: code,
            .responseCode: code,
            .timeNamelookup: seconds(metrics?.domainLookupEnd),
            .timeConnect: seconds(metrics?.secureConnectionStart ?? metrics?.connectEnd),
            .timeAppconnect: seconds(metrics?.secureConnectionEnd),
            .timeStarttransfer: seconds(metrics?.responseStart),
            .timeTotal: String(format: "%.6f", max(0, end.timeIntervalSince(start))),
            .sizeDownload: String(metrics?.responseBodyBytesReceived ?? 0),
            .remoteIP: metrics?.remoteAddress ?? "",
            .remotePort: metrics?.remotePort.map(String.init) ?? "",
            .httpVersion: httpVersion(metrics?.networkProtocolName),
            .numRedirects: String(redirects),
            .urlEffective: response?.url?.absoluteString ?? "",
        ]
    }

    /// curl's spelling of the protocol: `1.1`, `1.0` or `2`; `0` when none was spoken.
    private static func httpVersion(_ name: String?) -> String {
        switch name {
        case "h2": "2"
        case "http/1.0": "1.0"
        case "http/1.1": "1.1"
        default: "0"
        }
    }
}
