/// Aligned text columns: numbers right-aligned, text left-aligned.
public struct TextTable {
    public enum Alignment { case left, right }

    private var headers: [String]
    private var alignments: [Alignment]
    private var rows: [[String]] = []

    public init(_ columns: [(String, Alignment)]) {
        headers = columns.map(\.0)
        alignments = columns.map(\.1)
    }

    public mutating func append(_ row: [String]) { rows.append(row) }

    public func render() -> String {
        let all = [headers] + rows
        let widths = headers.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.indices.map { column in
                let cell = row[column], pad = String(repeating: " ", count: widths[column] - cell.count)
                return alignments[column] == .left ? cell + pad : pad + cell
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }.joined(separator: "\n") + "\n"
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
