import FramescopeCore

/// `analyze --format text`: the verdict first, then a table per connection and direction,
/// then the evidence.
public enum AnalysisTextFormatter {
    public static func render(_ r: AnalysisReport) -> String {
        var out = ""
        if let c = r.capture {
            out += "captured on \(c.interface)\(c.filter.map { " (filter: \($0))" } ?? "") for \(seconds(c.durationSeconds)) s: "
            out += "\(counted(c.packetsCaptured, "packet")) captured, \(c.kernelDrops) dropped by the kernel, \(c.interfaceDrops) by the interface"
            if c.analysisDrops > 0 { out += ", \(c.analysisDrops) not analysed (analysis fell behind; \(counted(c.shedConnections, "connection")) let go)" }
            out += (c.savedTo.map { _ in "; saved to \(c.files.count > 1 ? c.files.joined(separator: ", ") : c.files.first ?? c.savedTo!)" } ?? "") + "\n"
        }
        for warning in r.warnings { out += "warning: \(warning)\n" }
        if !r.warnings.isEmpty { out += "\n" }
        out += "\(counted(r.totals.connections, "connection")), \(r.totals.dissectedConnections) dissected"
        if let d = r.dissectors.default {
            let name = r.dissectors.defaultName ?? d
            out += name == d ? " with \(d)" : " with \(name) (\(d))"
        }
        for (port, spec) in r.dissectors.byServerPort.sorted(by: { $0.key < $1.key }) { out += ", port \(port): \(spec)" }
        out += "; \(counted(r.packets.total, "packet"))\n"
        if let span = r.spanSentence { out += "traffic \(span)\n" }
        for line in r.inferenceSentences { out += "framing inferred (--dissector auto): \(line)\n" }
        out += "\n"
        out += verdict("client → server", r.totals.clientToServer, protobuf: r.protobuf)
        out += verdict("server → client", r.totals.serverToClient, protobuf: r.protobuf)
        if let tcp = r.tcp, r.packets.tcp > 0 {
            let lines = tcp.textLines(
                naiveLossPercent: r.totals.all.naiveReaderLossPercent,
                directions: [("client → server", "client", "server"), ("server → client", "server", "client")])
            out += lines.joined(separator: "\n") + "\n"
        }
        if let lines = r.responseTimes?.textLines { out += lines.joined(separator: "\n") + "\n" }
        out += "\n"
        if let caption = r.listedCaption { out += caption + ":\n" }
        out += connectionTable(r)
        out += types(r)
        out += worst(r)
        out += examples(r)
        out += evidence(r)
        out += suggestions(r)
        return out
    }

    private static func suggestions(_ r: AnalysisReport) -> String {
        guard !r.specSuggestions.isEmpty else { return "" }
        return "\nSPECs next to this one that frame cleanly:\n" + r.suggestionSentences.map { "  \($0)\n" }.joined()
    }

    private static func verdict(_ label: String, _ f: AnalysisReport.Figures, protobuf: AnalysisReport.Protobuf?) -> String {
        guard f.messages + f.malformed + f.incompleteAtEnd + f.damagedByGaps > 0 else { return "\(label): no messages\n" }
        var s = "\(label): \(counted(f.messages, "message")) in \(counted(f.segments, "segment"))"
        if f.messages > 0 {
            // Figures of messages only where there are some (not "sizes 0–0 B, up to 0 segments").
            s += " (sizes \(Int(f.messageSize.min))–\(Int(f.messageSize.max)) B, median \(Int(f.messageSize.p50)))\n"
            s += "  \(pct(f.partialPercent)) arrive split across segments (\(f.partialMessages) partial, up to \(counted(f.maxSegmentsPerMessage, "segment")))\n"
            if let why = f.partialWhy { s += "    \(why)\n" }
            s += "  \(pct(f.mergedPercent)) of segments carry several messages (\(f.mergedSegments) merged, up to \(f.maxMessagesPerSegment) in one)\n"
            if let why = f.mergedWhy { s += "    \(why)\n" }
            s += "  a one-read-one-message receiver would lose \(pct(f.naiveReaderLossPercent)) (\(counted(f.naiveReaderLoss, "message")))\n"
            if let asCaptured = f.asCaptured { s += "  \(asCaptured.sentence)\n" }
        } else {
            s += "\n"
        }
        var problems: [String] = []
        if f.malformed > 0 {
            let reasons = f.malformedByReason.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            problems.append("\(f.malformed) malformed (\(reasons))")
        }
        if f.incompleteAtEnd > 0 { problems.append("\(f.incompleteAtEnd) incomplete at end (\(f.incompleteBytes) B)") }
        if f.damagedByGaps > 0 { problems.append("\(f.damagedByGaps) damaged by capture gaps") }
        if f.undissectedBytes > 0 { problems.append("\(counted(f.undissectedBytes, "byte")) undissected") }
        if f.leadingBytes > 0 { problems.append("\(f.leadingBytes) leading bytes before the first boundary (picked up mid-stream)") }
        if let bits = f.boundaryEvidenceBits { problems.append("boundaries found with ≥ \(bits) bits of evidence") }
        if f.boundariesNotFound > 0 {
            problems.append("no boundary found in \(f.boundariesNotFound) search\(f.boundariesNotFound == 1 ? "" : "es") (too little evidence; --mid-stream start frames a picked-up direction from its first byte)")
        }
        if f.stopped { problems.append("gave up on a direction (1 MiB without a boundary)") }
        if !problems.isEmpty { s += "  " + problems.joined(separator: "; ") + "\n" }
        if let protobuf, let p = f.protobuf, p.checked > 0 { s += "  protobuf: " + p.summary(protobuf) + "\n" }
        return s
    }

    private static func connectionTable(_ r: AnalysisReport) -> String {
        var table = TextTable([
            ("ID", .right), ("FROM", .left), ("", .left), ("TO", .left), ("DISSECTOR", .left), ("MSGS", .right), ("SEGS", .right),
            ("PARTIAL", .right), ("MERGED", .right), ("NAIVE LOSS", .right), ("MALFORMED", .right), ("INCOMPLETE", .right),
            ("GAP B", .right),
        ])
        for c in r.connections {
            for d in c.directions where d.bytes > 0 || d.gapBytes > 0 {
                let f = d.figures
                table.append([
                    String(c.id), d.from, "→", d.to, c.dissector ?? "-", String(f.messages), String(f.segments),
                    "\(f.partialMessages) (\(pct(f.partialPercent)))", "\(f.mergedSegments) (\(pct(f.mergedPercent)))",
                    "\(f.naiveReaderLoss) (\(pct(f.naiveReaderLossPercent)))", String(f.malformed), String(f.incompleteAtEnd),
                    String(d.gapBytes),
                ])
            }
        }
        return table.render()
    }

    /// Message counts per type value, for dissectors with `type=`.
    private static func types(_ r: AnalysisReport) -> String {
        var s = ""
        for (label, f) in [("client → server", r.totals.clientToServer), ("server → client", r.totals.serverToClient)] {
            let types = f.rankedTypes
            guard !types.isEmpty else { continue }
            let top = types.prefix(12).map(AnalysisReport.Figures.typeSummary)
            s += "  all, \(label): " + top.joined(separator: ", ") + (types.count > 12 ? ", …" : "") + "\n"
        }
        for c in r.connections {
            for d in c.directions {
                guard let types = d.messageTypes, !types.isEmpty else { continue }
                let top = types.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(12).map { "\($0.key) ×\($0.value)" }
                s += "  #\(c.id) \(d.from) → \(d.to): " + top.joined(separator: ", ") + (types.count > 12 ? ", …" : "") + "\n"
            }
        }
        return s.isEmpty ? "" : "\nmessage types:\n" + s
    }

    private static func worst(_ r: AnalysisReport) -> String {
        let ranked = r.shownWorstDirections
        guard !ranked.isEmpty else { return "" }
        var s = "\nworst directions:\n"
        for (c, _, d) in ranked {
            s += "  #\(c.id) \(d.from) → \(d.to): \(d.figures.malformed) malformed, naive-reader loss \(pct(d.figures.naiveReaderLossPercent))\n"
        }
        return s
    }

    private static func examples(_ r: AnalysisReport) -> String {
        guard !r.examples.isEmpty else { return "" }
        var s = "\nsplit and glued, examples:\n"
        for e in r.examples { s += "  \(e.kind): \(e.sentence)\n    wireshark: \(e.wiresharkFilter)\n" }
        return s
    }

    private static func evidence(_ r: AnalysisReport) -> String {
        guard !r.events.isEmpty else { return "" }
        var s = "\nevidence (\(r.eventsCaption)):\n"
        for e in r.shownEvents {
            var what = e.kind
            if let reason = e.reason { what += " (\(reason))" }
            s += "  \(what): #\(e.connection) \(e.from) → \(e.to) offset \(e.offset), frame \(e.frame)"
            if e.kind == "malformed" {
                s += e.evidenceBits.map { ", \(e.length) B of junk, framing resumed (\($0) bits of evidence)" } ?? ", \(e.length) B of junk, no boundary found after it"
            } else if e.length > 0 {
                s += ", \(e.length) B"
                if let bits = e.evidenceBits { s += " (\(bits) bits of evidence)" }
            }
            if let at = e.failedAt, let frame = e.failedInFrame { s += ", stops parsing at offset \(at) (frame \(frame))" }
            s += "\n    wireshark: \(e.wiresharkFilter)\n"
            if !e.bytes.isEmpty { s += "    bytes: \(hex(e.bytes))\n" }
            if let looksLike = e.looksLike { s += "    looks like: \(looksLike)\n" }
        }
        return s
    }

    private static func seconds(_ value: Double) -> String {
        String(Double(Int((value * 10).rounded())) / 10)
    }

    private static func pct(_ value: Double) -> String { percentText(value) }
}
