/// `analyze --format markdown`: the report to paste into an issue tracker — the verdict first,
/// then histograms drawn with bars, the worst connections, and the evidence with Wireshark
/// filters and hex.
public enum AnalysisMarkdownFormatter {
    public static func render(_ r: AnalysisReport) -> String {
        var out = "## framescope: how TCP cut and glued the messages\n\n"
        for warning in r.warnings { out += "> ⚠️ \(warning)\n" }
        if !r.warnings.isEmpty { out += "\n" }
        for line in r.inferenceSentences { out += "- **framing inferred (`--dissector auto`):** \(line)\n" }
        if let span = r.spanSentence { out += "- **traffic:** \(span)\n" }
        for (direction, sentence) in r.verdict { out += "- **\(direction):** \(sentence)\n" }
        out += "\n| | client → server | server → client |\n|---|---:|---:|\n"
        let (up, down) = (r.totals.clientToServer, r.totals.serverToClient)
        let rows: [(String, (AnalysisReport.Figures) -> String)] = [
            ("messages", { "\($0.messages)" }),
            ("segments", { "\($0.segments)" }),
            ("partial messages", { "\($0.partialMessages) (\(pct($0.partialPercent)))" }),
            ("merged segments", { "\($0.mergedSegments) (\(pct($0.mergedPercent)))" }),
            ("naive-reader loss", { "\($0.naiveReaderLoss) (\(pct($0.naiveReaderLossPercent)))" }),
            ("message size p50 / p99 / max", { "\(Int($0.messageSize.p50)) / \(Int($0.messageSize.p99)) / \(Int($0.messageSize.max)) B" }),
            ("assembly latency p99", { milliseconds($0.assemblyLatency.p99) }),
            ("malformed", { "\($0.malformed)" }),
            ("incomplete at end", { "\($0.incompleteAtEnd)" }),
            ("damaged by capture gaps", { "\($0.damagedByGaps)" }),
        ]
        // Rows of framing recovery, where it ran.
        let recovery: [(String, (AnalysisReport.Figures) -> String, (AnalysisReport.Figures) -> Bool)] = [
            ("undissected bytes", { "\($0.undissectedBytes)" }, { $0.undissectedBytes > 0 }),
            ("leading bytes (picked up mid-stream)", { "\($0.leadingBytes)" }, { $0.leadingBytes > 0 }),
            ("weakest boundary found", { $0.boundaryEvidenceBits.map { "\($0) bits" } ?? "-" }, { $0.boundaryEvidenceBits != nil }),
            ("searches without a boundary", { "\($0.boundariesNotFound)" }, { $0.boundariesNotFound > 0 }),
        ]
        for (name, value) in rows { out += "| \(name) | \(value(up)) | \(value(down)) |\n" }
        if let a = up.asCaptured, let b = down.asCaptured {
            // `--mss`: the rows above are the wire's; these, the capture point's.
            let asCaptured: [(String, (AnalysisReport.AsCaptured) -> String)] = [
                ("segments as captured (without `--mss`)", { "\($0.segments)" }),
                ("partial messages as captured", { "\($0.partialMessages) (\(pct($0.partialPercent)))" }),
                ("merged segments as captured", { "\($0.mergedSegments) (\(pct($0.mergedPercent)))" }),
                ("naive-reader loss as captured", { "\($0.naiveReaderLoss) (\(pct($0.naiveReaderLossPercent)))" }),
            ]
            for (name, value) in asCaptured { out += "| \(name) | \(value(a)) | \(value(b)) |\n" }
        }
        for (name, value, ran) in recovery where ran(up) || ran(down) { out += "| \(name) | \(value(up)) | \(value(down)) |\n" }
        if let tcp = r.tcp, r.packets.tcp > 0 {
            // The network's side, per direction of data (tshark's TCP analysis).
            let tcpRows: [(String, (AnalysisReport.TCPDirection) -> String)] = [
                ("data to its ACK p50 / p99", { $0.ackRTTSamples == 0 ? "-" : "\(duration($0.ackRTT.p50)) / \(duration($0.ackRTT.p99))" }),
                ("retransmissions", { "\($0.retransmissions)" }),
                ("out of order", { "\($0.outOfOrder)" }),
                ("duplicate ACKs from the receiver", { "\($0.duplicateAcks)" }),
                ("zero windows from the receiver", { "\($0.zeroWindows)" }),
                ("segments that filled the receiver's window", { "\($0.windowFull)" }),
            ]
            for (name, value) in tcpRows { out += "| \(name) | \(value(tcp.clientToServer)) | \(value(tcp.serverToClient)) |\n" }
        }
        if let protobuf = r.protobuf {
            let label = protobuf.message.map { "bodies not a valid `\($0)`" } ?? "bodies not protobuf wire data"
            let cell = { (f: AnalysisReport.Figures) in f.protobuf.map { "\($0.invalid) of \($0.checked) (\(pct($0.invalidPercent)))" } ?? "-" }
            out += "| \(label) | \(cell(up)) | \(cell(down)) |\n"
            for (direction, f) in [("client → server", up), ("server → client", down)] {
                if let p = f.protobuf, p.checked > 0 { out += "\n- protobuf, \(direction): \(p.summary(protobuf))" }
            }
            out += "\n"
        }
        for (direction, f) in [("client → server", up), ("server → client", down)] {
            if let why = f.partialWhy { out += "\n- partial, \(direction): \(why)" }
            if let why = f.mergedWhy { out += "\n- merged, \(direction): \(why)" }
            if f.partialWhy != nil || f.mergedWhy != nil { out += "\n" }
        }
        if let tcp = r.tcp, r.packets.tcp > 0, let headline = tcp.textLines(naiveLossPercent: r.totals.all.naiveReaderLossPercent, directions: []).first {
            out += "\n- **\(headline)**\n"
        }
        out += histogram("Segments per message", pairs: r.totals.all.segmentsPerMessage, unit: "segments")
        out += histogram("Messages per segment", pairs: r.totals.all.messagesPerSegment, unit: "messages")
        out += histogram(
            "Message sizes (powers of two)", pairs: r.totals.all.messageSizeBins.map { $0.map(Int.init) }, unit: "bytes",
            label: { $0 >= 1 << 20 ? "\($0 >> 20)M" : $0 >= 1 << 10 ? "\($0 >> 10)K" : String($0) })
        out += types(r)
        if let lines = r.responseTimes?.textLines {
            out += "\n**Response time by request type** (\(counted(r.responseTimes!.paired, "request")) answered in order)\n\n"
            out += lines.dropFirst().map { "- " + $0.trimmingPrefix("  ") + "\n" }.joined()
        }
        out += histogram(
            "Assembly latency of split messages, first to last segment (powers of two)",
            pairs: r.totals.all.assemblyLatencyBins.filter { $0[0] > 0 }.map { $0.map(Int.init) }, unit: "",
            label: { "\(microseconds($0))–\(microseconds(2 * $0))" })
        out += timelines(r)
        out += worstConnections(r)
        out += examples(r)
        out += evidence(r)
        out += suggestions(r)
        return out
    }

    /// Messages by type over all connections (one SPEC with a type field framed them all).
    private static func types(_ r: AnalysisReport) -> String {
        var out = ""
        for (label, f) in [("client → server", r.totals.clientToServer), ("server → client", r.totals.serverToClient)] {
            let types = f.rankedTypes
            guard !types.isEmpty else { continue }
            out += "- **\(label):**\n\n| type | messages | partial | merged | assembly p50 | p99 |\n|---|---:|---:|---:|---:|---:|\n"
            for t in types {
                let latency = f.assemblyLatencyByType?[t.name]?.latency
                out += "| `\(t.name)` | \(t.messages) | \(t.partial ?? 0) | \(t.merged ?? 0) | "
                    + (latency.map { "\(duration($0.p50)) | \(duration($0.p99))" } ?? "– | –") + " |\n"
            }
            out += "\n"
        }
        return out.isEmpty ? "" : "\n**Message types**\n\n" + out
    }

    /// "512 µs", "1 ms", "2 s" (powers of two of microseconds, rounded down past a thousand).
    private static func microseconds(_ n: Int) -> String {
        n >= 1_000_000 ? "\(n / 1_000_000) s" : n >= 1000 ? "\(n / 1000) ms" : "\(n) µs"
    }

    /// A histogram as a code block of bars (counts scaled to 40 characters).
    private static func histogram(
        _ title: String, pairs: [[Int]], unit: String, label: (Int) -> String = { $0 == 63 ? "63+" : String($0) }
    ) -> String {
        guard let largest = pairs.map({ $0[1] }).max(), largest > 0 else { return "" }
        let labels = pairs.map { label($0[0]) }
        let width = labels.map(\.count).max() ?? 0
        var out = "\n**\(title)**\n\n```\n"
        for (pair, text) in zip(pairs, labels) {
            let bar = String(repeating: "█", count: max(1, pair[1] * 40 / largest))
            out += "\(String(repeating: " ", count: width - text.count))\(text) \(unit) │ \(bar) \(pair[1])\n"
        }
        return out + "```\n"
    }

    /// Partial, merged and malformed over time as one sparkline per kind, for the connections
    /// with the most events (each line is that direction's own time axis).
    private static func timelines(_ r: AnalysisReport) -> String {
        let rows = r.timelineConnections.shown.flatMap { c in c.directions.enumerated().compactMap { i, d in d.timeline.map { (c.id, i, $0) } } }
        guard !rows.isEmpty else { return "" }
        var out = "\n**Over time** (one character = one interval; ▁ to █ = fewer to more)\n\n```\n"
        for (id, direction, t) in rows {
            out += "#\(id) \(direction == 0 ? "client → server" : "server → client"), \(milliseconds(t.bucketSeconds)) per character from \(t.origin)\n"
            for (name, series) in [("partial  ", t.partial), ("merged   ", t.merged), ("malformed", t.malformed)] where series.contains(where: { $0 > 0 }) {
                out += "  \(name) " + sparkline(series) + "  \(series.reduce(0, +))\n"
            }
        }
        return out + "```\n"
    }

    private static func sparkline(_ values: [Int]) -> String {
        let marks = Array("▁▂▃▄▅▆▇█"), largest = max(1, values.max() ?? 1)
        return String(values.map { $0 == 0 ? " " : marks[min(7, ($0 * 8 - 1) / largest)] })
    }

    private static func worstConnections(_ r: AnalysisReport) -> String {
        let ranked = r.shownWorstDirections
        guard !ranked.isEmpty else { return "" }
        var out = "\n### Worst directions\n\n| # | from → to | dissector | messages | partial | merged | naive loss | malformed |\n|---:|---|---|---:|---:|---:|---:|---:|\n"
        for (c, _, d) in ranked {
            let f = d.figures
            out += "| \(c.id) | `\(d.from)` → `\(d.to)` | `\(c.dissector ?? "-")` | \(f.messages) | \(pct(f.partialPercent)) | \(pct(f.mergedPercent)) | \(pct(f.naiveReaderLossPercent)) | \(f.malformed) |\n"
        }
        if let caption = r.listedCaption { out += "\nFrom \(caption).\n" }
        return out
    }

    private static func suggestions(_ r: AnalysisReport) -> String {
        guard !r.specSuggestions.isEmpty else { return "" }
        return "\n### SPECs that frame cleanly\n\n" + r.suggestionSentences.map { "- \($0)\n" }.joined()
    }

    private static func examples(_ r: AnalysisReport) -> String {
        guard !r.examples.isEmpty else { return "" }
        var out = "\n### Split and glued: examples\n\n"
        for e in r.examples { out += "- **\(e.kind)** — \(e.sentence)  \n  Wireshark: `\(e.wiresharkFilter)`\n" }
        return out
    }

    private static func evidence(_ r: AnalysisReport) -> String {
        guard !r.events.isEmpty else { return "" }
        var out = "\n### Evidence (\(r.eventsCaption))\n\n"
        for e in r.shownEvents {
            out += "- **\(e.kind)\(e.reason.map { " (\($0))" } ?? "")** — connection \(e.connection) `\(e.from)` → `\(e.to)`, "
            out += "stream offset \(e.offset), frame \(e.frame)\(e.length > 0 ? ", \(e.length) B" : "")"
            if let at = e.failedAt, let frame = e.failedInFrame { out += ", stops parsing at offset \(at) (frame \(frame))" }
            out += "  \n"
            out += "  Wireshark: `\(e.wiresharkFilter)`"
            if !e.bytes.isEmpty { out += "  \n  bytes: `\(hex(e.bytes))`" }
            if let looksLike = e.looksLike { out += "  \n  looks like: \(looksLike)" }
            out += "\n"
        }
        return out
    }

    /// Seconds as milliseconds with three decimals.
    private static func pct(_ value: Double) -> String { percentText(value) }
}
