import FramescopeCore

/// Service response time by request type (`ResponseTimes`): Wireshark's `-z srt` for any framed
/// protocol.
extension AnalysisReport {
    public struct ResponseTimesReport: Sendable {
        /// Whether the traffic paired as requests and responses (else the times mean little and
        /// the human formats leave them out).
        public var requestResponse: Bool
        public var paired: Int
        public var unpaired: Int
        public var unanswered: Int
        public var abandoned: Int
        /// Per request type (its name, or "all" without a type field), most requests first.
        public var byType: [(type: String, requests: Int, seconds: Distribution)]
        /// The times (µs) by type name: what `byType` is computed from (the report's `sketches`).
        var histograms: [String: QuantileHistogram]

        init(_ t: ResponseTimes, choice: DissectorChoice) {
            let names = choice.onlySpec?.typeNames(fromClient: true) ?? [:]
            // By label: values that share a name (MQTT's flags) share a line.
            var byLabel: [String: QuantileHistogram] = [:]
            for (value, h) in t.byType {
                let label = value == ResponseTimes.untyped ? "all" : typeLabel(value, names: names)
                if byLabel[label] == nil { byLabel[label] = h } else { byLabel[label]!.merge(h) }
            }
            self.init(requestResponse: t.looksLikeRequestResponse, paired: t.paired, unpaired: t.unpaired, unanswered: t.unanswered, abandoned: t.abandoned, byLabel: byLabel)
        }

        /// From the counts and the times by type name.
        init(requestResponse: Bool, paired: Int, unpaired: Int, unanswered: Int, abandoned: Int, byLabel: [String: QuantileHistogram]) {
            (self.requestResponse, self.paired, self.unpaired, self.unanswered, self.abandoned) = (requestResponse, paired, unpaired, unanswered, abandoned)
            histograms = byLabel
            byType = byLabel.map { label, h in (label, h.count, Distribution(microseconds: h)) }
                .sorted { ($0.requests, $1.type) > ($1.requests, $0.type) }
        }

        func write(to w: inout JSONWriter) {
            w.object { w in
                w.field("abandoned", abandoned)
                w.key("byType")
                w.object { w in
                    for entry in byType.sorted(by: { $0.type < $1.type }) {
                        w.key(named: entry.type)
                        w.object { w in
                            w.field("max", entry.seconds.max)
                            w.field("min", entry.seconds.min)
                            w.field("p50", entry.seconds.p50)
                            w.field("p99", entry.seconds.p99)
                            w.field("requests", entry.requests)
                        }
                    }
                }
                w.field("paired", paired)
                w.field("requestResponse", requestResponse)
                w.field("unanswered", unanswered)
                w.field("unpaired", unpaired)
            }
        }

        /// "response time (request → response, in order): Query ×84 p50 1.2 ms, p99 …", nil
        /// when the traffic is not request/response.
        var textLines: [String]? {
            guard requestResponse else { return nil }
            var lines = ["response time by request type (\(counted(paired, "request")) answered in order, as Wireshark's -z srt):"]
            for entry in byType.prefix(12) {
                lines.append(
                    "  \(entry.type) ×\(entry.requests): p50 \(duration(entry.seconds.p50)), p99 \(duration(entry.seconds.p99)), max \(duration(entry.seconds.max))")
            }
            if byType.count > 12 { lines.append("  … \(byType.count - 12) more types in --format json") }
            return lines
        }
    }
}
