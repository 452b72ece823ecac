import BenchSupport
import Foundation

/// The scaling curves as one SVG: four panels (req/s, CPU µs per request, p99 latency on a log
/// scale, peak RSS) against requests in flight on a log₂ axis, one line per client, wrk's
/// dashed. No third-party code: the markup is written here.
struct ScalingPlot {
    let report: ScalingReport

    static let panelWidth = 470.0
    static let panelHeight = 300.0
    static let legendHeight = 56.0
    static let margin = (left: 72.0, right: 18.0, top: 30.0, bottom: 46.0)
    static let colors = ["#1f77b4", "#2ca02c", "#d62728", "#555555", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2"]

    /// One series: a client's (in flight, value) points.
    struct Series {
        var client: ClientKind
        var color: String
        var points: [(x: Double, y: Double)]
    }

    func svg() -> String {
        let all = report.points
        let colored = report.clients.enumerated().map { index, client in
            (client, Self.colors[index % Self.colors.count], all[client] ?? [])
        }
        func series(_ value: (ScalingReport.Point) -> Double?) -> [Series] {
            colored.map { client, color, points in
                Series(client: client, color: color, points: points.compactMap { point in value(point).map { (x: Double(point.inFlight), y: $0) } })
            }
        }
        let steps = report.steps.map { Double($0.inFlight) }
        let width = 2 * Self.panelWidth
        let height = Self.legendHeight + 2 * Self.panelHeight
        var out = [
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">",
            "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>",
            "<text x=\"\(width / 2)\" y=\"20\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">Small GETs against nginx, by requests in flight (median of the rounds)</text>",
        ]
        var legendX = 20.0
        for (client, color, _) in colored {
            let dash = client.isReference ? " stroke-dasharray=\"6 4\"" : ""
            out.append("<line x1=\"\(legendX)\" y1=\"40\" x2=\"\(legendX + 28)\" y2=\"40\" stroke=\"\(color)\" stroke-width=\"2.5\"\(dash)/>")
            out.append("<text x=\"\(legendX + 34)\" y=\"44\">\(Self.escape(ScalingReport.label(client)))</text>")
            legendX += 44 + Double(ScalingReport.label(client).count) * 7
        }
        let panels: [(String, [Series], Bool)] = [
            ("requests per second", series { $0.rate }, false),
            ("client CPU per request, µs (user + system)", series { $0.cpuMicrosPerRequest }, false),
            ("p99 latency, ms (log scale)", series { $0.p99Millis }, true),
            ("peak RSS, MiB (whole process)", series { Double($0.peakRSSKiB) / 1024 }, false),
        ]
        for (index, panel) in panels.enumerated() {
            let originX = Double(index % 2) * Self.panelWidth
            let originY = Self.legendHeight + Double(index / 2) * Self.panelHeight
            out += Self.panel(title: panel.0, series: panel.1, logY: panel.2, steps: steps, x: originX, y: originY)
        }
        out.append("</svg>")
        return out.joined(separator: "\n") + "\n"
    }

    /// One panel's frame, ticks, grid and lines, its top-left corner at (`x`, `y`).
    static func panel(title: String, series: [Series], logY: Bool, steps: [Double], x: Double, y: Double) -> [String] {
        let left = x + margin.left
        let right = x + panelWidth - margin.right
        let top = y + margin.top
        let bottom = y + panelHeight - margin.bottom
        let values = series.flatMap { $0.points.map(\.y) }.filter { logY ? $0 > 0 : true }

        let xLow = log2(steps.min() ?? 1)
        let xHigh = max(log2(steps.max() ?? 2), xLow + 1)
        func px(_ value: Double) -> Double { left + (log2(value) - xLow) / (xHigh - xLow) * (right - left) }

        let yTicks: [Double]
        let yLow: Double
        let yHigh: Double
        if logY {
            let low = floor(log10(values.min() ?? 0.1))
            let high = max(ceil(log10(values.max() ?? 1)), low + 1)
            yLow = low
            yHigh = high
            yTicks = stride(from: low, through: high, by: 1).map { pow(10, $0) }
        } else {
            let (step, top) = niceScale(values.max() ?? 1)
            yLow = 0
            yHigh = top
            yTicks = stride(from: 0, through: top + step / 2, by: step).map { $0 }
        }
        func py(_ value: Double) -> Double {
            let position = logY ? (log10(max(value, pow(10, yLow))) - yLow) : value
            return bottom - position / (yHigh - yLow) * (bottom - top)
        }

        var out = ["<g>", "<text x=\"\(x + panelWidth / 2)\" y=\"\(y + 18)\" text-anchor=\"middle\" font-weight=\"bold\">\(escape(title))</text>"]
        for tick in yTicks {
            let row = py(tick)
            out.append("<line x1=\"\(left)\" y1=\"\(row)\" x2=\"\(right)\" y2=\"\(row)\" stroke=\"#e3e3e3\"/>")
            out.append("<text x=\"\(left - 6)\" y=\"\(row + 4)\" text-anchor=\"end\">\(escape(tickLabel(tick)))</text>")
        }
        for step in steps {
            let column = px(step)
            out.append("<line x1=\"\(column)\" y1=\"\(top)\" x2=\"\(column)\" y2=\"\(bottom)\" stroke=\"#f0f0f0\"/>")
            out.append("<text x=\"\(column)\" y=\"\(bottom + 16)\" text-anchor=\"middle\">\(escape(tickLabel(step)))</text>")
        }
        out.append("<rect x=\"\(left)\" y=\"\(top)\" width=\"\(right - left)\" height=\"\(bottom - top)\" fill=\"none\" stroke=\"#888\"/>")
        out.append("<text x=\"\((left + right) / 2)\" y=\"\(bottom + 34)\" text-anchor=\"middle\" fill=\"#444\">requests in flight (log scale)</text>")
        for line in series where !line.points.isEmpty {
            let dash = line.client.isReference ? " stroke-dasharray=\"6 4\"" : ""
            let coordinates = line.points.map { String(format: "%.1f,%.1f", px($0.x), py($0.y)) }.joined(separator: " ")
            out.append("<polyline points=\"\(coordinates)\" fill=\"none\" stroke=\"\(line.color)\" stroke-width=\"2\"\(dash)/>")
            for point in line.points {
                out.append(String(format: "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" ", px(point.x), py(point.y)) + "fill=\"\(line.color)\"/>")
            }
        }
        out.append("</g>")
        return out
    }

    /// A tick spacing of 1, 2 or 5 × 10ⁿ giving about five ticks up to `maximum`, and the
    /// axis top (a multiple of it at or above `maximum`).
    static func niceScale(_ maximum: Double) -> (step: Double, top: Double) {
        guard maximum > 0 else { return (1, 5) }
        let rough = maximum / 5
        let magnitude = pow(10, floor(log10(rough)))
        let fraction = rough / magnitude
        let step = (fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10) * magnitude
        return (step, ceil(maximum / step) * step)
    }

    static func tickLabel(_ value: Double) -> String {
        if value >= 1_000_000 { return formatValue(value / 1_000_000) + "M" }
        if value >= 10_000 { return formatValue(value / 1_000) + "k" }
        if value >= 1 || value == 0 { return formatValue(value) }
        return String(format: "%g", value)
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
