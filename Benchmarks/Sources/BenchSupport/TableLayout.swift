/// Lays out a table for a terminal: the header, a rule of dashes, then the rows, each column
/// as wide as its widest cell, separated by two spaces. The first `leftAligned` columns are
/// aligned left (names), the others right (numbers).
///
/// - Parameters:
///   - header: The column titles; every row has as many cells.
///   - rows: The cells, row by row.
///   - leftAligned: How many leading columns are aligned left.
/// - Returns: One line per header, rule and row.
public func alignedColumns(header: [String], rows: [[String]], leftAligned: Int = 2) -> [String] {
    let lines = [header] + rows
    let widths = header.indices.map { column in lines.map { $0[column].count }.max() ?? 0 }
    func render(_ cells: [String]) -> String {
        cells.enumerated().map { index, cell in
            let pad = String(repeating: " ", count: widths[index] - cell.count)
            return index < leftAligned ? cell + pad : pad + cell
        }.joined(separator: "  ")
    }
    return [render(header), widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")] + rows.map(render)
}
