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

    /// Redraws (or prints one line) from the figures so far: `finished` and `open` connections,
    /// totalled as the report totals them.
    func refresh(elapsed: Double, packets: Int, bytes: Int, statistics: CaptureStatistics?, analyzer: Analyzer, open: [ConnectionAnalysis]) {
        let seconds = max(elapsed - last.elapsed, 1e-6)
        let all = AnalysisReport.totals(analyzer: analyzer, open: open).all
        let drops = (statistics?.kernelDrops ?? 0) + (statistics?.interfaceDrops ?? 0)
        let rates = (
            packets: Double(packets - last.packets) / seconds, bytes: Double(bytes - last.bytes) / seconds,
            messages: Double(all.messages - last.messages) / seconds)
        let rows = open.filter { $0.directions != nil }.map { c in
            let figures = c.combined
            return Row(connection: c, figures: figures, rate: Double(figures.messages - (lastPerConnection[c.summary.info.id] ?? 0)) / seconds)
        }
        if fullScreen {
            let busiest = rows.sorted { ($0.rate, $1.connection.summary.info.id) > ($1.rate, $0.connection.summary.info.id) }
            draw(elapsed: elapsed, packets: packets, bytes: bytes, drops: drops, rates: rates, all: all, open: open.count, rows: Array(busiest.prefix(15)))
        } else {
            var line = "elapsed=\(fixed(elapsed, 2)) packets=\(packets) pps=\(fixed(rates.packets, 1)) bytes=\(bytes) bps=\(fixed(rates.bytes, 1))"
            line += " drops=\(drops) connections=\(open.count) messages=\(all.messages) mps=\(fixed(rates.messages, 1))"
            line += " partial=\(percentText(all.partialPercent)) merged=\(percentText(all.mergedPercent))"
            line += " naive_loss=\(percentText(all.naiveReaderLossPercent)) malformed=\(all.malformed)"
            if let p = all.protobuf, p.checked > 0 { line += " invalid_protobuf=\(p.invalid)" }
            write(line + "\n")
        }
        lastPerConnection = Dictionary(uniqueKeysWithValues: rows.map { ($0.connection.summary.info.id, $0.figures.messages) })
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

    struct Row {
        var connection: ConnectionAnalysis
        var figures: AnalysisReport.Figures
        var rate: Double
    }

    private func draw(
        elapsed: Double, packets: Int, bytes: Int, drops: Int, rates: (packets: Double, bytes: Double, messages: Double),
        all: AnalysisReport.Figures, open: Int, rows: [Row]
    ) {
        let bold = color ? "\u{1B}[1m" : "", red = color ? "\u{1B}[31m" : "", reset = color ? "\u{1B}[0m" : ""
        var screen = ""
        screen += "\(bold)\(header)\(reset) — \(fixed(elapsed, 1)) s — Ctrl-C to stop\n"
        screen += "packets \(packets) (\(fixed(rates.packets, 0))/s)   bytes \(bytes) (\(fixed(rates.bytes / 1024, 1)) KiB/s)   "
        screen += (drops > 0 ? "\(red)kernel drops \(drops)\(reset)" : "kernel drops 0") + "   connections \(open)\n"
        screen += "messages \(all.messages) (\(fixed(rates.messages, 0))/s)   partial \(percentText(all.partialPercent))"
        screen += "   merged \(percentText(all.mergedPercent))   naive-reader loss \(percentText(all.naiveReaderLossPercent))"
        screen += "   " + (all.malformed > 0 ? "\(red)malformed \(all.malformed)\(reset)" : "malformed 0")
        if let p = all.protobuf, p.checked > 0 {
            screen += "   " + (p.invalid > 0 ? "\(red)invalid protobuf \(p.invalid)\(reset)" : "invalid protobuf 0")
        }
        screen += "\n\n"
        var table = TextTable([
            ("ID", .right), ("CLIENT", .left), ("", .left), ("SERVER", .left), ("MSG/S", .right), ("MSGS", .right), ("PARTIAL", .right),
            ("MERGED", .right), ("NAIVE LOSS", .right), ("MALFORMED", .right),
        ])
        for row in rows {
            let info = row.connection.summary.info, f = row.figures
            table.append([
                String(info.id.rawValue), info.client.description, "→", info.server.description, fixed(row.rate, 0), String(f.messages),
                percentText(f.partialPercent), percentText(f.mergedPercent), percentText(f.naiveReaderLossPercent), String(f.malformed),
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

private func fixed(_ value: Double, _ decimals: Int) -> String {
    let scale = [1.0, 10, 100, 1000][decimals]
    let scaled = Int64((value * scale).rounded())
    if decimals == 0 { return String(scaled) }
    let whole = scaled / Int64(scale), fraction = String(abs(scaled) % Int64(scale))
    return (scaled < 0 && whole == 0 ? "-" : "") + "\(whole)." + String(repeating: "0", count: decimals - fraction.count) + fraction
}
