/// Choices every human format shares, so text, Markdown and HTML cut, rank and word things
/// alike; `--format json` has everything.
extension AnalysisReport {
    /// How much each human format lists.
    public enum Shown {
        public static let worstDirections = 10
        public static let events = 20
        /// Connections drawn in the timelines (those with the most events).
        public static let timelineConnections = 12
    }

    /// "the 20 worst of 50000 connections …, and 49980 more: …", or nil when every connection is listed.
    public var listedCaption: String? {
        let more = totals.connections - analyses.count
        guard more > 0 else { return nil }
        return "the \(analyses.count) worst of \(counted(totals.connections, "connection")) (malformed, damaged or cut messages first, then "
            + "naive-reader loss), and \(more) more: --top N lists more, --format json lists every one"
    }

    /// The events the human formats list.
    public var shownEvents: ArraySlice<Event> { events.prefix(Shown.events) }

    /// `1,234 events, the first 20 shown; all in --format json`, or `3 events`.
    public var eventsCaption: String {
        eventsTotal > Shown.events ? "\(counted(eventsTotal, "event")), the first \(Shown.events) shown; all in --format json" : "\(counted(eventsTotal, "event"))"
    }

    /// The worst directions the human formats list.
    public var shownWorstDirections: [(connection: Connection, index: Int, direction: DirectionReport)] {
        worstDirections(limit: Shown.worstDirections)
    }

    /// The connections whose timelines are drawn: most events first (a malformed header counts
    /// ten), then listed in ID order.
    public var timelineConnections: (shown: [Connection], withEvents: Int) {
        let withEvents = connections.filter { c in c.directions.contains { $0.timeline != nil } }
        func weight(_ c: Connection) -> Int {
            c.directions.reduce(0) { sum, d in
                sum + (d.timeline.map { $0.partial.reduce(0, +) + $0.merged.reduce(0, +) + 10 * $0.malformed.reduce(0, +) } ?? 0)
            }
        }
        let shown = withEvents.sorted { (weight($0), $1.id) > (weight($1), $0.id) }.prefix(Shown.timelineConnections).sorted { $0.id < $1.id }
        return (shown, withEvents.count)
    }

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
            var s = "\(percentText(f.partialPercent)) of \(counted(f.messages, "message")) arrive split across segments; "
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
        var s = "\(counted(checked, "body", "bodies")) \(what), \(invalid) invalid"
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

extension AnalysisReport {
    /// How human times are shown: UTC, or the zone the capture names.
    public var clock: HumanClock { HumanClock(inputs: inputs) }

    /// Whether frame numbers are an original capture's, read through a shard's frame index.
    public var originalFrames: Bool { Self.originalFrames(inputs) }

    static func originalFrames(_ inputs: [FlowsReport.Input]) -> Bool { inputs.contains { $0.frameIndex != nil } }

    /// "from 2023-11-14T22:13:20.000Z to 2023-11-14T22:14:38.221Z (78.2 s), UTC", or nil without
    /// traffic.
    public var spanSentence: String? {
        guard let (first, last) = span else { return nil }
        let seconds = Double(last.nanoseconds - first.nanoseconds) / 1e9, clock = clock
        return "from \(clock.iso(first)) to \(clock.iso(last)) (\(FlowsTextFormatter.format3(seconds)) s), \(clock.label)"
    }
}

/// "1 message", "2 messages": a count with its noun in the right number.
public func counted<N: BinaryInteger>(_ n: N, _ singular: String, _ plural: String? = nil) -> String {
    "\(n) \(n == 1 ? singular : plural ?? singular + "s")"
}
