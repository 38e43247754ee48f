import FramescopeCapture
import FramescopeCore
import FramescopeReport

#if canImport(Glibc)
import Glibc
#endif

/// What `watch` shows while it captures: redrawn in place on a terminal, else one
/// `key=value` line per interval.
final class LiveView {
    let fd: Int32
    let fullScreen: Bool
    let color: Bool
    let header: String
    private var last: (elapsed: Double, packets: Int, bytes: Int, messages: Int) = (0, 0, 0, 0)
    private var lastPerConnection: [ConnectionID: Int] = [:]

    init(fd: Int32, fullScreen: Bool, color: Bool, interface: String, filter: String?) {
        self.fd = fd
        self.fullScreen = fullScreen
        self.color = color
        header = "framescope watch \(interface)" + (filter.map { " — filter: \($0)" } ?? "")
    }

    func refresh(elapsed: Double, packets: Int, bytes: Int, statistics: CaptureStatistics?, analyzer: Analyzer, openConnections: Int) {
        let seconds = max(elapsed - last.elapsed, 1e-6)
        let open = analyzer.openConnections
        var totals = analyzer.folded
        for c in analyzer.connections where !c.directions.isEmpty {
            for d in Direction.allCases { totals[d.rawValue].merge(c.directions[d.rawValue]) }
        }
        for c in open { for d in Direction.allCases { totals[d.rawValue].merge(c.directions[d.rawValue]) } }
        var all = totals[0]
        all.merge(totals[1])
        let drops = (statistics?.kernelDrops ?? 0) + (statistics?.interfaceDrops ?? 0)
        let rates = (
            packets: Double(packets - last.packets) / seconds, bytes: Double(bytes - last.bytes) / seconds,
            messages: Double(all.messages - last.messages) / seconds)
        if fullScreen {
            var perConnection: [(OpenConnectionRow)] = open.map { c in
                let messages = c.directions.reduce(0) { $0 + $1.messages }
                return OpenConnectionRow(connection: c, rate: Double(messages - (lastPerConnection[c.info.id] ?? 0)) / seconds)
            }
            perConnection.sort { ($0.rate, $1.connection.info.id) > ($1.rate, $0.connection.info.id) }
            draw(elapsed: elapsed, packets: packets, bytes: bytes, drops: drops, rates: rates, all: all, open: openConnections, rows: Array(perConnection.prefix(15)))
        } else {
            let line = "elapsed=\(fixed(elapsed, 2)) packets=\(packets) pps=\(fixed(rates.packets, 1)) bytes=\(bytes) bps=\(fixed(rates.bytes, 1))"
                + " drops=\(drops) connections=\(openConnections) messages=\(all.messages) mps=\(fixed(rates.messages, 1))"
                + " partial=\(percentText(all.partialMessages, all.messages)) merged=\(percentText(all.mergedSegments, all.segmentsTouched))"
                + " naive_loss=\(percentText(all.naiveReaderLoss, all.messages)) malformed=\(all.malformed)"
                + (all.protobufChecked > 0 ? " invalid_protobuf=\(all.protobufInvalid)" : "") + "\n"
            write(line)
        }
        lastPerConnection = Dictionary(uniqueKeysWithValues: open.map { ($0.info.id, $0.directions.reduce(0) { $0 + $1.messages }) })
        last = (elapsed, packets, bytes, all.messages)
    }

    /// Clears the screen for the report, on a terminal; no-op otherwise.
    func start() {
        if fullScreen { write("\u{1B}[H\u{1B}[2J") }
    }

    /// Leaves the terminal ready for the report.
    func finish() {
        if fullScreen { write("\u{1B}[H\u{1B}[J") }
    }

    struct OpenConnectionRow {
        var connection: Analyzer.OpenConnection
        var rate: Double
    }

    private func draw(
        elapsed: Double, packets: Int, bytes: Int, drops: Int, rates: (packets: Double, bytes: Double, messages: Double),
        all: DirectionAnalysis, open: Int, rows: [OpenConnectionRow]
    ) {
        let bold = color ? "\u{1B}[1m" : "", red = color ? "\u{1B}[31m" : "", reset = color ? "\u{1B}[0m" : ""
        var screen = ""
        screen += "\(bold)\(header)\(reset) — \(fixed(elapsed, 1)) s — Ctrl-C to stop\n"
        screen += "packets \(packets) (\(fixed(rates.packets, 0))/s)   bytes \(bytes) (\(fixed(rates.bytes / 1024, 1)) KiB/s)   "
        screen += (drops > 0 ? "\(red)kernel drops \(drops)\(reset)" : "kernel drops 0") + "   connections \(open)\n"
        screen += "messages \(all.messages) (\(fixed(rates.messages, 0))/s)   partial \(percentText(all.partialMessages, all.messages))"
        screen += "   merged \(percentText(all.mergedSegments, all.segmentsTouched))   naive-reader loss \(percentText(all.naiveReaderLoss, all.messages))"
        screen += "   " + (all.malformed > 0 ? "\(red)malformed \(all.malformed)\(reset)" : "malformed 0")
        if all.protobufChecked > 0 {
            screen += "   " + (all.protobufInvalid > 0 ? "\(red)invalid protobuf \(all.protobufInvalid)\(reset)" : "invalid protobuf 0")
        }
        screen += "\n\n"
        var table = TextTable([
            ("ID", .right), ("CLIENT", .left), ("", .left), ("SERVER", .left), ("MSG/S", .right), ("MSGS", .right), ("PARTIAL", .right),
            ("MERGED", .right), ("NAIVE LOSS", .right), ("MALFORMED", .right),
        ])
        for row in rows {
            var a = row.connection.directions[0]
            a.merge(row.connection.directions[1])
            table.append([
                String(row.connection.info.id.rawValue), row.connection.info.client.description, "→", row.connection.info.server.description,
                fixed(row.rate, 0), String(a.messages), percentText(a.partialMessages, a.messages), percentText(a.mergedSegments, a.segmentsTouched),
                percentText(a.naiveReaderLoss, a.messages), String(a.malformed),
            ])
        }
        screen += table.render()
        // Redraw in place: home, each line cleared to its end, the rest of the screen cleared.
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        write("\u{1B}[H" + lines.map { $0 + "\u{1B}[K\n" }.joined() + "\u{1B}[J")
    }

    private func write(_ text: String) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n <= 0 { return }
                offset += n
            }
        }
    }
}

extension DirectionAnalysis {
    /// Segments that carried bytes of at least one message (the live view's merged base).
    var segmentsTouched: Int { messagesPerSegment.total }
}

private func fixed(_ value: Double, _ decimals: Int) -> String {
    let scale = [1.0, 10, 100, 1000][decimals]
    let scaled = Int64((value * scale).rounded())
    if decimals == 0 { return String(scaled) }
    let whole = scaled / Int64(scale), fraction = String(abs(scaled) % Int64(scale))
    return (scaled < 0 && whole == 0 ? "-" : "") + "\(whole)." + String(repeating: "0", count: decimals - fraction.count) + fraction
}

private func percentText(_ part: Int, _ whole: Int) -> String {
    whole == 0 ? "0%" : fixed(Double(part) * 100 / Double(whole), 1) + "%"
}
