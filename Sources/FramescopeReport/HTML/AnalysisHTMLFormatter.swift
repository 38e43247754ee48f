import FramescopeCore

/// `analyze --format html`: one self-contained page to attach to a bug report — the verdict,
/// charts (inline SVG), the worst connections and the evidence with hex and Wireshark filters.
/// No network, and the page reads fine without its small script (copy buttons, sorting).
/// Every figure shown carries `data-json`, its path in the JSON report (`#ID` picks the
/// connection with that id), so tests can check the page against `--format json`.
public enum AnalysisHTMLFormatter {
    public static func render(_ r: AnalysisReport) -> String {
        let title = "framescope: " + (r.capture.map { "live capture on \($0.interface)" } ?? r.inputs.map { baseName($0.path) }.joined(separator: ", "))
        var body = header(r)
        if !r.inference.isEmpty {
            body += "<h2>Framing inferred (--dissector auto)</h2>\n<ul>" + r.inferenceSentences.map { "<li>\(escapeHTML($0))</li>" }.joined() + "</ul>\n"
        }
        body += summary(r)
        body += network(r)
        body += typesAndResponses(r)
        body += charts(r)
        body += protobuf(r)
        body += timeline(r)
        body += worst(r)
        body += examples(r)
        body += evidence(r)
        if !r.specSuggestions.isEmpty {
            body += "<h2>SPECs that frame cleanly</h2>\n<ul>" + r.suggestionSentences.map { "<li>\(escapeHTML($0))</li>" }.joined() + "</ul>\n"
        }
        body += "<footer>framescope · figures as in <code>--format json</code> (framescope.report/4) · definitions in the README</footer>\n"
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(escapeHTML(title))</title>
            <style>\(HTMLAssets.css)</style>
            </head><body>
            <h1>\(escapeHTML(title))</h1>
            \(body)<script>\(HTMLAssets.script)</script>
            </body></html>

            """
    }

    private static func header(_ r: AnalysisReport) -> String {
        var out = "<p class=\"meta\">"
        if let c = r.capture {
            out += "\(counted(c.packetsCaptured, "packet")) captured in \(seconds(c.durationSeconds)) s, \(c.drops) dropped · "
        }
        out += "<span data-json=\"packets.total\" data-value=\"\(r.packets.total)\">\(grouped(r.packets.total))</span> packets · "
        out += "<span data-json=\"totals.connections\" data-value=\"\(r.totals.connections)\">\(grouped(r.totals.connections))</span> connections, "
        out += "\(grouped(r.totals.dissectedConnections)) dissected"
        if let span = r.spanSentence { out += " · traffic \(escapeHTML(span))" }
        if let d = r.dissectors.default { out += " with <code>\(escapeHTML(d))</code>" }
        for (port, spec) in r.dissectors.byServerPort.sorted(by: { $0.key < $1.key }) {
            out += " · port \(port): <code>\(escapeHTML(spec))</code>"
        }
        out += "</p>\n"
        for warning in r.warnings { out += "<p class=\"warning\">⚠ \(escapeHTML(warning))</p>\n" }
        let verdict = r.verdict
        out += verdict.isEmpty
            ? "<p class=\"verdict\">No complete messages were found: check the dissector.</p>\n"
            : "<ul class=\"verdict\">" + verdict.map { "<li><strong>\(escapeHTML($0.direction)):</strong> \(escapeHTML($0.sentence))</li>" }.joined() + "</ul>\n"
        return out
    }

    private static var directions: [(label: String, key: String, keyPath: KeyPath<AnalysisReport.Totals, AnalysisReport.Figures>)] {
        [("client → server", "clientToServer", \.clientToServer), ("server → client", "serverToClient", \.serverToClient)]
    }

    private static func summary(_ r: AnalysisReport) -> String {
        let rows: [(String, String, (AnalysisReport.Figures) -> Double)] = [
            ("messages", "messages", { Double($0.messages) }),
            ("segments", "segments", { Double($0.segments) }),
            ("partial messages", "partialMessages", { Double($0.partialMessages) }),
            ("partial %", "partialPercent", { $0.partialPercent }),
            ("merged segments", "mergedSegments", { Double($0.mergedSegments) }),
            ("merged %", "mergedPercent", { $0.mergedPercent }),
            ("naive-reader loss", "naiveReaderLoss", { Double($0.naiveReaderLoss) }),
            ("naive-reader loss %", "naiveReaderLossPercent", { $0.naiveReaderLossPercent }),
            ("max segments per message", "maxSegmentsPerMessage", { Double($0.maxSegmentsPerMessage) }),
            ("max messages per segment", "maxMessagesPerSegment", { Double($0.maxMessagesPerSegment) }),
            ("message size p50 (B)", "messageSize.p50", { $0.messageSize.p50 }),
            ("message size p99 (B)", "messageSize.p99", { $0.messageSize.p99 }),
            ("message size max (B)", "messageSize.max", { $0.messageSize.max }),
            ("malformed headers", "malformed", { Double($0.malformed) }),
            ("incomplete at end", "incompleteAtEnd", { Double($0.incompleteAtEnd) }),
            ("damaged by capture gaps", "damagedByGaps", { Double($0.damagedByGaps) }),
            ("undissected bytes", "undissectedBytes", { Double($0.undissectedBytes) }),
            ("leading bytes (picked up mid-stream)", "leadingBytes", { Double($0.leadingBytes) }),
            ("searches without a boundary", "boundariesNotFound", { Double($0.boundariesNotFound) }),
        ]
        var out = "<h2>Figures</h2>\n<table class=\"figures\"><thead><tr><th></th>"
        out += directions.map { "<th>\($0.label)</th>" }.joined() + "</tr></thead><tbody>\n"
        for (label, key, value) in rows {
            out += "<tr><th>\(label)</th>"
            for d in directions {
                let v = value(r.totals[keyPath: d.keyPath])
                out += "<td data-json=\"totals.\(d.key).\(key)\" data-value=\"\(number(v))\">\(grouped(v))</td>"
            }
            out += "</tr>\n"
        }
        if r.totals.clientToServer.asCaptured != nil {
            // `--mss`: the rows above are the wire's; these, the capture point's.
            let asCaptured: [(String, String, (AnalysisReport.AsCaptured) -> Double)] = [
                ("segments as captured (without --mss)", "segments", { Double($0.segments) }),
                ("partial messages as captured", "partialMessages", { Double($0.partialMessages) }),
                ("merged segments as captured", "mergedSegments", { Double($0.mergedSegments) }),
                ("naive-reader loss as captured", "naiveReaderLoss", { Double($0.naiveReaderLoss) }),
            ]
            for (label, key, value) in asCaptured {
                out += "<tr><th>\(label)</th>"
                for d in directions {
                    guard let a = r.totals[keyPath: d.keyPath].asCaptured else { continue }
                    let v = value(a)
                    out += "<td data-json=\"totals.\(d.key).asCaptured.\(key)\" data-value=\"\(number(v))\">\(grouped(v))</td>"
                }
                out += "</tr>\n"
            }
        }
        // Why: partial messages and merged segments by cause, where any counted.
        let causes: [(String, String, KeyPath<AnalysisReport.Figures, [String: Int]>, SplitExample.Kind)] = [
            ("partial", "partialCauses", \.partialCauses, .partial), ("merged", "mergedCauses", \.mergedCauses, .merged),
        ]
        for (kind, key, counts, k) in causes {
            for cause in SplitCause.allCases where directions.contains(where: { r.totals[keyPath: $0.keyPath][keyPath: counts][cause.description] != nil }) {
                out += "<tr><th title=\"\(escapeHTML(cause.explanation(k)))\">· \(kind): \(cause)</th>"
                for d in directions {
                    let n = r.totals[keyPath: d.keyPath][keyPath: counts][cause.description] ?? 0
                    out += n == 0 ? "<td>0</td>" : "<td data-json=\"totals.\(d.key).\(key).\(cause)\" data-value=\"\(n)\">\(grouped(n))</td>"
                }
                out += "</tr>\n"
            }
        }
        return out + "</tbody></table>\n"
    }

    /// Messages by type over all connections, and the response time per request type.
    private static func typesAndResponses(_ r: AnalysisReport) -> String {
        var out = ""
        let names = Set(directions.flatMap { r.totals[keyPath: $0.keyPath].messageTypes?.keys.map { $0 } ?? [] }).sorted()
        if !names.isEmpty {
            out += "<h2>Message types</h2>\n<table class=\"figures\"><thead><tr><th></th>"
            out += directions.map { "<th>\($0.label)</th><th>partial</th><th>merged</th><th>assembly p99 (ms)</th>" }.joined() + "</tr></thead><tbody>\n"
            for name in names {
                out += "<tr><th>\(escapeHTML(name))</th>"
                for d in directions {
                    let f = r.totals[keyPath: d.keyPath]
                    // A name that is no plain path part (quoted ASCII values) is shown without its path.
                    let plain = name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }
                    for (key, n) in [("messageTypes", f.messageTypes?[name]), ("partialTypes", f.partialTypes?[name]), ("mergedTypes", f.mergedTypes?[name])] {
                        guard let n else {
                            out += "<td>0</td>"
                            continue
                        }
                        out += plain ? "<td data-json=\"totals.\(d.key).\(key).\(name)\" data-value=\"\(n)\">\(grouped(n))</td>" : "<td>\(grouped(n))</td>"
                    }
                    if let p99 = f.assemblyLatencyByType?[name]?.latency.p99 {
                        out += millisecondsCell(p99, json: plain ? "totals.\(d.key).assemblyLatencyByType.\(name).p99" : nil)
                    } else {
                        out += "<td>–</td>"
                    }
                }
                out += "</tr>\n"
            }
            out += "</tbody></table>\n"
        }
        if let times = r.responseTimes, times.requestResponse {
            out += "<h2>Response time by request type</h2>\n<p class=\"meta\">\(counted(times.paired, "request")) answered in order, "
            out += "from the request's last segment to the response's (Wireshark's service response time).</p>\n"
            out += "<table class=\"figures\"><thead><tr><th>request</th><th>requests</th><th>p50 (ms)</th><th>p99 (ms)</th><th>max (ms)</th></tr></thead><tbody>\n"
            for entry in times.byType {
                let path = "responseTimes.byType.\(escapeHTML(entry.type))"
                out += "<tr><th>\(escapeHTML(entry.type))</th><td data-json=\"\(path).requests\" data-value=\"\(entry.requests)\">\(grouped(entry.requests))</td>"
                for (key, v) in [("p50", entry.seconds.p50), ("p99", entry.seconds.p99), ("max", entry.seconds.max)] {
                    out += millisecondsCell(v, json: "\(path).\(key)")
                }
                out += "</tr>\n"
            }
            out += "</tbody></table>\n"
        }
        return out
    }

    /// Seconds shown in milliseconds to the microsecond, tied to the JSON's value at `json` (none:
    /// a path the page's check cannot follow).
    private static func millisecondsCell(_ seconds: Double, json: String?) -> String {
        let shown = grouped((seconds * 1_000_000).rounded() / 1000)
        guard let json else { return "<td>\(shown)</td>" }
        return "<td data-json=\"\(json)\" data-value=\"\(number(seconds))\" data-scale=\"1000\">\(shown)</td>"
    }

    /// tshark's side of the story: was anything lost on the wire, or only in the receive loop?
    private static func network(_ r: AnalysisReport) -> String {
        guard let tcp = r.tcp, r.packets.tcp > 0 else { return "" }
        let headline = tcp.textLines(naiveLossPercent: r.totals.all.naiveReaderLossPercent, directions: []).first ?? ""
        var out = "<h2>TCP</h2>\n<p class=\"verdict\">\(escapeHTML(headline))</p>\n"
        // Round trips are shown in milliseconds (data-scale), stored in seconds as in the JSON.
        let rows: [(String, String, (AnalysisReport.TCPDirection) -> Double, scale: Int)] = [
            ("data to its ACK p50 (ms)", "ackRTT.p50", { $0.ackRTT.p50 }, 1000),
            ("data to its ACK p99 (ms)", "ackRTT.p99", { $0.ackRTT.p99 }, 1000),
            ("round trips measured", "ackRTTSamples", { Double($0.ackRTTSamples) }, 1),
            ("retransmissions", "retransmissions", { Double($0.retransmissions) }, 1),
            ("out of order", "outOfOrder", { Double($0.outOfOrder) }, 1),
            ("duplicate ACKs from the receiver", "duplicateAcks", { Double($0.duplicateAcks) }, 1),
            ("zero windows from the receiver", "zeroWindows", { Double($0.zeroWindows) }, 1),
            ("segments that filled the receiver's window", "windowFull", { Double($0.windowFull) }, 1),
        ]
        out += "<table class=\"figures\"><thead><tr><th></th>" + directions.map { "<th>\($0.label)</th>" }.joined() + "</tr></thead><tbody>\n"
        for (label, key, value, scale) in rows {
            out += "<tr><th>\(label)</th>"
            for (d, figures) in zip(directions, [tcp.clientToServer, tcp.serverToClient]) {
                let v = value(figures)
                let shown = scale == 1 ? grouped(v) : grouped((v * Double(scale) * 1000).rounded() / 1000)
                let scaled = scale == 1 ? "" : " data-scale=\"\(scale)\""
                out += "<td data-json=\"tcp.\(d.key).\(key)\" data-value=\"\(number(v))\"\(scaled)>\(shown)</td>"
            }
            out += "</tr>\n"
        }
        return out + "</tbody></table>\n"
    }

    private static func charts(_ r: AnalysisReport) -> String {
        var out = "<h2>How TCP cut and glued the messages</h2>\n<div class=\"charts\">\n"
        out += pairChart(
            r, title: "Segments per message", caption: "messages by the number of segments that carried them (1 = whole in one segment)",
            key: "segmentsPerMessage", pairs: \.segmentsPerMessage, unit: "messages", label: { $0 == 63 ? "63+" : String($0) },
            what: { "\($0 == 63 ? "63 or more" : String($0)) segment\($0 == 1 ? "" : "s")" })
        out += pairChart(
            r, title: "Messages per segment", caption: "segments by the number of messages they carried bytes of (≥ 2 = merged)",
            key: "messagesPerSegment", pairs: \.messagesPerSegment, unit: "segments", label: { $0 == 63 ? "63+" : String($0) },
            what: { "\($0 == 63 ? "63 or more" : String($0)) message\($0 == 1 ? "" : "s")" })
        out += sizeChart(r)
        return out + "</div>\n"
    }

    /// A histogram stored as `[key, count]` pairs, one bar series per direction.
    private static func pairChart(
        _ r: AnalysisReport, title: String, caption: String, key: String, pairs: KeyPath<AnalysisReport.Figures, [[Int]]>, unit: String,
        label: (Int) -> String, what: (Int) -> String
    ) -> String {
        let keys = Set(directions.flatMap { r.totals[keyPath: $0.keyPath][keyPath: pairs].map { $0[0] } }).sorted()
        let series = directions.enumerated().map { i, d in
            let list = r.totals[keyPath: d.keyPath][keyPath: pairs]
            return BarChart.Series(
                name: d.label, cssClass: "s\(i)",
                values: keys.map { k in
                    list.firstIndex { $0[0] == k }.map { (list[$0][1], "totals.\(d.key).\(key).\($0).1") }
                })
        }
        return BarChart(title: title, caption: caption, categories: keys.map { (label($0), what($0)) }, series: series, unit: unit).render()
    }

    private static func sizeChart(_ r: AnalysisReport) -> String {
        let lowers = Set(directions.flatMap { r.totals[keyPath: $0.keyPath].messageSizeBins.map { $0[0] } }).sorted()
        let series = directions.enumerated().map { i, d in
            let bins = r.totals[keyPath: d.keyPath].messageSizeBins
            return BarChart.Series(
                name: d.label, cssClass: "s\(i)",
                values: lowers.map { lower in
                    bins.firstIndex { $0[0] == lower }.map { (Int(bins[$0][1]), "totals.\(d.key).messageSizeBins.\($0).1") }
                })
        }
        let categories = lowers.map { lower in
            (byteLabel(lower), lower <= 1 ? "\(counted(lower, "byte"))" : "\(lower)–\(counted(2 * lower - 1, "byte"))")
        }
        return BarChart(
            title: "Message sizes", caption: "messages by size, in powers of two (bytes)", categories: categories, series: series,
            unit: "messages"
        ).render()
    }

    private static func protobuf(_ r: AnalysisReport) -> String {
        guard let p = r.protobuf else { return "" }
        var out = "<h2>Message bodies</h2>\n<p class=\"meta\">"
        out += p.message.map { "Parsed as <code>\(escapeHTML($0))</code> (schema from the descriptor set)" } ?? "Checked as protobuf wire data (no schema)"
        out += p.scope == "varint" ? ", on varint-framed connections.</p>\n" : ", on every length-framed connection.</p>\n"
        out += "<table class=\"figures\"><thead><tr><th></th>" + directions.map { "<th>\($0.label)</th>" }.joined() + "</tr></thead><tbody>\n"
        let rows: [(String, String, (AnalysisReport.ProtobufFigures) -> Double)] = [
            ("bodies checked", "checked", { Double($0.checked) }), ("invalid", "invalid", { Double($0.invalid) }),
            ("invalid %", "invalidPercent", { $0.invalidPercent }),
        ]
        for (label, key, value) in rows {
            out += "<tr><th>\(label)</th>"
            for d in directions {
                guard let f = r.totals[keyPath: d.keyPath].protobuf else { out += "<td>-</td>"; continue }
                let v = value(f)
                out += "<td data-json=\"totals.\(d.key).protobuf.\(key)\" data-value=\"\(number(v))\">\(grouped(v))</td>"
            }
            out += "</tr>\n"
        }
        let reasons = Set(directions.flatMap { r.totals[keyPath: $0.keyPath].protobuf?.invalidByReason.keys.map { $0 } ?? [] }).sorted()
        for reason in reasons {
            out += "<tr><th>· \(escapeHTML(reason))</th>"
            for d in directions {
                guard let n = r.totals[keyPath: d.keyPath].protobuf?.invalidByReason[reason] else { out += "<td>0</td>"; continue }
                out += "<td data-json=\"totals.\(d.key).protobuf.invalidByReason.\(escapeHTML(reason))\" data-value=\"\(n)\">\(grouped(n))</td>"
            }
            out += "</tr>\n"
        }
        out += "</tbody></table>\n"
        if let field = p.countBy {
            let labels = Set(directions.flatMap { r.totals[keyPath: $0.keyPath].protobuf?.counts?.keys.map { $0 } ?? [] }).sorted()
            let series = directions.enumerated().map { i, d in
                BarChart.Series(
                    name: d.label, cssClass: "s\(i)",
                    values: labels.map { label in
                        r.totals[keyPath: d.keyPath].protobuf?.counts?[label].map { ($0, "totals.\(d.key).protobuf.counts.\(escapeHTML(label))") }
                    })
            }
            out += "<div class=\"charts\">"
            out += BarChart(
                title: "Valid bodies by \(field)", caption: "messages that parsed, by the value of \(field)", categories: labels.map { ($0, "\(field) = \($0)") },
                series: series, unit: "messages"
            ).render()
            out += "</div>\n"
        }
        return out
    }

    private static func timeline(_ r: AnalysisReport) -> String {
        let (chosen, withEvents) = r.timelineConnections
        guard !chosen.isEmpty else { return "" }
        let listed = Array(r.connections)
        var rows: [TimelineChart.Row] = []
        for c in chosen {
            for (i, d) in c.directions.enumerated() {
                guard let t = d.timeline else { continue }
                rows.append(
                    TimelineChart.Row(
                        label: "#\(c.id) \(i == 0 ? "client → server" : "server → client")", title: "\(d.from) → \(d.to)", timeline: t,
                        json: "connections.#\(c.id).directions.\(i)"))
            }
        }
        // The axis spans the events shown, not the connections' whole lives (events in a quarter
        // of them were a sliver of an empty axis).
        let spans = rows.compactMap(\.eventSpan)
        let start = spans.map(\.lowerBound).min() ?? listed.map { epochSeconds($0.firstTime) }.min() ?? 0
        let end = spans.map(\.upperBound).max() ?? start
        var out = "<h2>Over time</h2>\n<p class=\"legendline\"><span class=\"key partial\"></span>partial messages "
        out += "<span class=\"key merged\"></span>merged segments <span class=\"key malformed\"></span>malformed headers · "
        out += "\(counted(rows.count, "direction")) of the \(counted(chosen.count, "connection")) with the most events"
        if withEvents > chosen.count { out += " (of \(withEvents))" }
        out += "; darker = more in that interval; time from the first event shown</p>\n"
        return out + "<figure class=\"wide\">" + TimelineChart(rows: rows, start: start, end: end).render() + "</figure>\n"
    }

    private static func worst(_ r: AnalysisReport) -> String {
        let ranked = r.shownWorstDirections
        guard !ranked.isEmpty else { return "" }
        var out = "<h2>Worst connections</h2>\n<table class=\"sortable\"><thead><tr><th>#</th><th>from → to</th><th>dissector</th>"
        out += "<th>messages</th><th>partial %</th><th>merged %</th><th>naive loss</th><th>malformed</th><th>incomplete</th><th>Wireshark</th></tr></thead><tbody>\n"
        for (c, i, d) in ranked {
            let path = "connections.#\(c.id).directions.\(i)"
            let f = d.figures
            func cell(_ key: String, _ value: Double) -> String {
                "<td data-json=\"\(path).figures.\(key)\" data-value=\"\(number(value))\">\(grouped(value))</td>"
            }
            out += "<tr><td>\(c.id)</td><td><code class=\"addr\">\(escapeHTML(d.from))</code> → <code class=\"addr\">\(escapeHTML(d.to))</code></td>"
            out += "<td><code>\(escapeHTML(c.dissector ?? "-"))</code></td>"
            // (A connection's JSON leaves percentages to its counts: they have no path there.)
            out += cell("messages", Double(f.messages)) + "<td>\(grouped(f.partialPercent))</td><td>\(grouped(f.mergedPercent))</td>"
            out += cell("naiveReaderLoss", Double(f.naiveReaderLoss)) + cell("malformed", Double(f.malformed))
            out += cell("incompleteAtEnd", Double(f.incompleteAtEnd))
            out += "<td>" + copyable(connectionFilter(c.id, client: c.client, server: c.server, byAddress: r.originalFrames)) + "</td></tr>\n"
        }
        out += "</tbody></table>\n"
        if let caption = r.listedCaption { out += "<p>From \(escapeHTML(caption)).</p>\n" }
        return out
    }

    private static func examples(_ r: AnalysisReport) -> String {
        guard !r.examples.isEmpty else { return "" }
        var out = "<h2>Split and glued: examples</h2>\n"
        for (i, e) in r.examples.enumerated() {
            out += "<div class=\"event \(e.kind)\"><p><strong>\(e.kind)</strong> · connection \(e.connection), "
            out += "<code class=\"addr\">\(escapeHTML(e.from))</code> → <code class=\"addr\">\(escapeHTML(e.to))</code> · "
            out += "stream offset <span data-json=\"examples.\(i).offset\" data-value=\"\(e.offset)\">\(e.offset)</span> · "
            out += e.kind == "partial"
                ? "\(grouped(Double(e.length))) bytes in <span data-json=\"examples.\(i).count\" data-value=\"\(e.count)\">\(e.count)</span> segments, frames \(e.firstFrame)–\(e.lastFrame)"
                : "frame \(e.firstFrame) carries bytes of <span data-json=\"examples.\(i).count\" data-value=\"\(e.count)\">\(e.count)</span> messages"
            out += "</p>\n" + copyable(e.wiresharkFilter) + "</div>\n"
        }
        return out
    }

    private static func evidence(_ r: AnalysisReport) -> String {
        guard !r.events.isEmpty else { return "" }
        var out = "<h2>Evidence <small>(\(escapeHTML(r.eventsCaption)))</small></h2>\n"
        for (i, e) in r.shownEvents.enumerated() {
            out += "<div class=\"event \(e.kind)\"><p><strong>\(escapeHTML(e.kind))\(e.reason.map { " (\(escapeHTML($0)))" } ?? "")</strong> · "
            out += "connection \(e.connection), <code class=\"addr\">\(escapeHTML(e.from))</code> → <code class=\"addr\">\(escapeHTML(e.to))</code> · "
            out += "stream offset <span data-json=\"events.\(i).offset\" data-value=\"\(e.offset)\">\(e.offset)</span> · "
            out += "frame <span data-json=\"events.\(i).frame\" data-value=\"\(e.frame)\">\(e.frame)</span>"
            if e.length > 0 { out += " · \(grouped(Double(e.length))) \(e.length == 1 ? "byte" : "bytes")" }
            if let at = e.failedAt, let frame = e.failedInFrame {
                out += " · stops parsing at offset <span data-json=\"events.\(i).failedAt\" data-value=\"\(at)\">\(at)</span> (frame \(frame))"
            }
            out += " · \(e.time)</p>\n" + copyable(e.wiresharkFilter)
            if !e.bytes.isEmpty { out += "<pre class=\"hex\">\(escapeHTML(hexDump(e.bytes, offset: e.offset)))</pre>" }
            if let looksLike = e.looksLike { out += "<p class=\"looks-like\">Looks like \(escapeHTML(looksLike))</p>" }
            out += "</div>\n"
        }
        return out
    }

    private static func copyable(_ filter: String) -> String {
        "<span class=\"filter\"><code>\(escapeHTML(filter))</code><button class=\"copy\" data-copy=\"\(escapeHTML(filter))\">copy</button></span>"
    }

    /// `offset  hex bytes  |ascii|`.
    static func hexDump(_ bytes: [UInt8], offset: Int64) -> String {
        let ascii = String(bytes.map { (0x20..<0x7F).contains($0) ? Character(UnicodeScalar($0)) : "." })
        let position = String(offset, radix: 16)
        return String(repeating: "0", count: max(0, 8 - position.count)) + position + "  " + hex(bytes) + "  |" + ascii + "|"
    }

    private static func byteLabel(_ value: Int64) -> String {
        value >= 1 << 20 ? "\(value >> 20)M" : value >= 1 << 10 ? "\(value >> 10)K" : String(value)
    }

    private static func baseName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// A figure as JSON writes it: integers without a fraction.
    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    private static func grouped(_ value: Int) -> String { grouped(Double(value)) }

    /// Thousands separated by commas; fractions kept as they are.
    private static func grouped(_ value: Double) -> String {
        let text = number(value)
        let parts = text.split(separator: ".", maxSplits: 1)
        var digits = Array(parts[0]), out = ""
        let negative = digits.first == "-"
        if negative { digits.removeFirst() }
        for (i, d) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out += "," }
            out.append(d)
        }
        return (negative ? "-" : "") + out + (parts.count > 1 ? "." + parts[1] : "")
    }
}
