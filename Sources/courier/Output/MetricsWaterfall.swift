import Courier
import Foundation

/// Renders a request's metrics as a text waterfall: one bar per phase on a shared time axis.
enum MetricsWaterfall {
    static func lines(for metrics: EngineMetrics, width: Int = 40) -> [String] {
        let origin = metrics.fetchStart
        let phases: [(String, Date?, Date?)] = [
            ("DNS", metrics.domainLookupStart, metrics.domainLookupEnd),
            ("connect", metrics.connectStart, metrics.secureConnectionStart ?? metrics.connectEnd),
            ("TLS", metrics.secureConnectionStart, metrics.secureConnectionEnd),
            ("request", metrics.requestStart, metrics.requestEnd),
            ("wait", metrics.requestEnd, metrics.responseStart),
            ("download", metrics.responseStart, metrics.responseEnd),
        ]
        let end = metrics.responseEnd ?? Date()
        let total = max(end.timeIntervalSince(origin), 0.000_001)
        var lines: [String] = []
        for (name, start, finish) in phases {
            guard let start, let finish else {
                lines.append(name.padding(toLength: 9, withPad: " ", startingAt: 0) + "  (not applicable)")
                continue
            }
            let from = Int((start.timeIntervalSince(origin) / total * Double(width)).rounded(.down))
            let length = max(1, Int((finish.timeIntervalSince(start) / total * Double(width)).rounded()))
            let clampedFrom = min(max(from, 0), width - 1)
            let bar = String(repeating: " ", count: clampedFrom)
                + String(repeating: "=", count: min(length, width - clampedFrom))
            let milliseconds = finish.timeIntervalSince(start) * 1000
            lines.append(
                name.padding(toLength: 9, withPad: " ", startingAt: 0)
                    + "|" + bar.padding(toLength: width, withPad: " ", startingAt: 0) + "| "
                    + String(format: "%7.2f ms", milliseconds)
            )
        }
        lines.append(String(format: "total    %.2f ms; %lld bytes sent, %lld received; %@ %@",
            total * 1000,
            metrics.requestHeaderBytesSent + metrics.requestBodyBytesSent,
            metrics.responseHeaderBytesReceived + metrics.responseBodyBytesReceived,
            metrics.networkProtocolName ?? "?", metrics.tlsProtocolVersion ?? "plain"))
        if let host = metrics.coalescedConnectionHost {
            lines.append("reusing connection to \(host) (HTTP/2 coalescing: its certificate covers this host, same address)")
        }
        if !metrics.replayedAttempts.isEmpty {
            lines.append("replayed: the reused connection was found closed before any answer; sent again on a new connection")
        }
        if metrics.resourceFetchType == .localCache {
            lines.append("cache    hit: served from the local cache, nothing sent")
        } else if metrics.revalidatedFromCache {
            lines.append("cache    revalidated: 304 Not Modified, the stored body delivered")
        }
        return lines
    }
}
