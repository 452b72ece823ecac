import Foundation

/// The median of `values` (the mean of the middle two for an even count); 0 when empty.
public func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// A number for a table: thousands separators, one decimal below 100.
public func formatValue(_ value: Double) -> String {
    let formatter = NumberFormatter()
    formatter.numberStyle = .decimal
    formatter.maximumFractionDigits = value < 100 ? 1 : 0
    formatter.minimumFractionDigits = 0
    return formatter.string(from: NSNumber(value: value)) ?? String(format: "%.0f", value)
}

/// Prints a progress line to stderr (stdout carries the table).
public func log(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
