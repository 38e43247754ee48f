/// Choices every report format shares, so text, Markdown and HTML rank and word things alike.
extension AnalysisReport {
    /// Directions with malformed headers or naive-reader loss, worst first: malformed headers
    /// outrank loss (they mean desync), then the loss.
    public func worstDirections(limit: Int) -> [(connection: Connection, index: Int, direction: DirectionReport)] {
        let ranked = connections.flatMap { c in c.directions.enumerated().map { (connection: c, index: $0.offset, direction: $0.element) } }
            .filter { $0.direction.figures.naiveReaderLoss + $0.direction.figures.malformed > 0 }
            .sorted {
                ($0.direction.figures.malformed, $0.direction.figures.naiveReaderLoss)
                    > ($1.direction.figures.malformed, $1.direction.figures.naiveReaderLoss)
            }
        return Array(ranked.prefix(limit))
    }

    /// One sentence per direction with messages, after its label: what TCP did to them and what
    /// a naive reader loses.
    public var verdict: [(direction: String, sentence: String)] {
        [("server → client", totals.serverToClient), ("client → server", totals.clientToServer)].compactMap { label, f in
            guard f.messages > 0 else { return nil }
            var s = "\(percentText(f.partialPercent)) of \(f.messages) messages arrive split across segments; "
            s += "a one-read-one-message receiver would lose \(percentText(f.naiveReaderLossPercent)) of them"
            if f.malformed > 0 { s += "; \(f.malformed) malformed headers" }
            return (label, s + ".")
        }
    }
}

/// A percentage as the reports print it: `12%`, `12.5%`.
func percentText(_ value: Double) -> String {
    value == value.rounded() ? "\(Int(value))%" : "\(value)%"
}
