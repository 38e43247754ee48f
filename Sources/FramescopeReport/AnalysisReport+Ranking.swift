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
            if let p = f.protobuf, p.invalid > 0 {
                s += "; \(p.invalid) bodies are not \(protobuf?.message.map { "a valid \($0)" } ?? "protobuf wire data")"
            }
            return (label, s + ".")
        }
    }
}

extension AnalysisReport.ProtobufFigures {
    /// `160 bodies checked as framescope.samples.Envelope, 6 invalid (3.8%: invalid-utf8 4, …)`.
    public func summary(_ p: AnalysisReport.Protobuf) -> String {
        let what = p.message.map { "parsed as \($0)" } ?? "checked as protobuf wire data"
        var s = "\(checked) bodies \(what), \(invalid) invalid"
        if invalid > 0 {
            let reasons = invalidByReason.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            s += " (\(percentText(invalidPercent)): \(reasons))"
        }
        if let counts, let field = p.countBy, !counts.isEmpty {
            s += "; by \(field): " + counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }
        return s
    }
}

/// A percentage as the reports print it: `12%`, `12.5%`.
public func percentText(_ value: Double) -> String {
    value == value.rounded() ? "\(Int(value))%" : "\(value)%"
}
