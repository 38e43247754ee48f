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
    /// totalled as the report totals them, and what the capture thread has counted.
    func refresh(elapsed: Double, now: Double, progress: CaptureThread.Progress, analyzer: Analyzer, open: [ConnectionAnalysis]) {
        let seconds = max(elapsed - last.elapsed, 1e-6)
        let all = AnalysisReport.totals(analyzer: analyzer, open: open).all
        let statistics = progress.statistics
        let drops = Drops(kernel: (statistics?.kernelDrops ?? 0) + (statistics?.interfaceDrops ?? 0), analysis: progress.analysisDrops)
        let idle = progress.lastPacketAt.map { max(0, now - $0) }
        let rates = (
            packets: Double(progress.packets - last.packets) / seconds, bytes: Double(progress.bytes - last.bytes) / seconds,
            messages: Double(all.messages - last.messages) / seconds)
        let rows = open.filter { $0.directions != nil }.map { c in
            let figures = c.combined
            return Row(connection: c, figures: figures, rate: Double(figures.messages - (lastPerConnection[c.summary.info.id] ?? 0)) / seconds)
        }
        if fullScreen {
            let size = terminalSize()
            // Tables share what the header leaves: the busiest and the most troubled connections.
            let perTable = max(1, (size.rows - 9) / 2)
            let busiest = rows.filter { $0.rate > 0 }.sorted { ($0.rate, $1.connection.summary.info.id) > ($1.rate, $0.connection.summary.info.id) }
            let troubled = rows.map { (Trouble($0.connection), $0) }.filter { $0.0.problems > 0 || $0.0.naiveLoss > 0 }.sorted { $0.0 > $1.0 }.map(\.1)
            var screen = status(elapsed: elapsed, idle: idle, packets: progress.packets, bytes: progress.bytes, drops: drops, rates: rates, all: all, open: open.count)
            screen += "\n" + section("busiest (messages/s)", Array(busiest.prefix(perTable)), of: busiest.count, width: size.columns)
            screen += "\n" + section("most trouble (malformed, damaged, naive-reader loss)", Array(troubled.prefix(perTable)), of: troubled.count, width: size.columns)
            draw(screen, width: size.columns)
        } else {
            var line = "elapsed=\(fixed(elapsed, 2)) packets=\(progress.packets) pps=\(fixed(rates.packets, 1)) bytes=\(progress.bytes) bps=\(fixed(rates.bytes, 1))"
            line += " drops=\(drops.kernel) analysis_drops=\(drops.analysis) idle=\(idle.map { fixed($0, 1) } ?? "-")"
            line += " connections=\(open.count) messages=\(all.messages) mps=\(fixed(rates.messages, 1))"
            line += " partial=\(percentText(all.partialPercent)) merged=\(percentText(all.mergedPercent))"
            line += " naive_loss=\(percentText(all.naiveReaderLossPercent)) malformed=\(all.malformed)"
            if let p = all.protobuf, p.checked > 0 { line += " invalid_protobuf=\(p.invalid)" }
            write(line + "\n")
        }
        lastPerConnection = Dictionary(uniqueKeysWithValues: rows.map { ($0.connection.summary.info.id, $0.figures.messages) })
        last = (elapsed, progress.packets, progress.bytes, all.messages)
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

    struct Drops {
        var kernel: Int
        var analysis: Int
    }

    private var styles: (bold: String, red: String, reset: String) {
        color ? ("\u{1B}[1m", "\u{1B}[31m", "\u{1B}[0m") : ("", "", "")
    }

    /// The figures above the tables: one fact a line, so a narrow terminal cuts the least.
    private func status(
        elapsed: Double, idle: Double?, packets: Int, bytes: Int, drops: Drops, rates: (packets: Double, bytes: Double, messages: Double),
        all: AnalysisReport.Figures, open: Int
    ) -> String {
        let (bold, red, reset) = styles
        func alarm(_ label: String, _ value: Int) -> String { value > 0 ? "\(red)\(label) \(value)\(reset)" : "\(label) 0" }
        var screen = "\(bold)\(header)\(reset) — \(fixed(elapsed, 1)) s — Ctrl-C to stop\n"
        screen += "last packet " + (idle.map { "\(fixed($0, 1)) s ago" } ?? "none yet") + "   connections \(open)\n"
        screen += "packets \(packets) (\(fixed(rates.packets, 0))/s)   bytes \(bytes) (\(fixed(rates.bytes / 1024, 1)) KiB/s)\n"
        screen += alarm("kernel drops", drops.kernel) + "   " + alarm("analysis fell behind, dropped", drops.analysis) + "\n"
        screen += "messages \(all.messages) (\(fixed(rates.messages, 0))/s)   partial \(percentText(all.partialPercent))"
        screen += "   merged \(percentText(all.mergedPercent))   naive-reader loss \(percentText(all.naiveReaderLossPercent))"
        screen += "   " + alarm("malformed", all.malformed)
        if let p = all.protobuf, p.checked > 0 { screen += "   " + alarm("invalid protobuf", p.invalid) }
        return screen + "\n"
    }

    /// A titled table of connections, with as many columns as `width` holds (the endpoints and
    /// rates go first, the connection, messages and its trouble last).
    private func section(_ title: String, _ rows: [Row], of total: Int, width: Int) -> String {
        let (bold, _, reset) = styles
        let out = "\(bold)\(title)\(reset)" + (total > rows.count ? ", \(rows.count) of \(total)" : "") + "\n"
        if rows.isEmpty { return out + "  none\n" }
        let columns: [(String, TextTable.Alignment, (Row) -> String)] = [
            ("ID", .right, { String($0.connection.summary.info.id.rawValue) }),
            ("CLIENT", .left, { $0.connection.summary.info.client.description }),
            ("SERVER", .left, { $0.connection.summary.info.server.description }),
            ("MSG/S", .right, { fixed($0.rate, 0) }),
            ("MSGS", .right, { String($0.figures.messages) }),
            ("PARTIAL", .right, { percentText($0.figures.partialPercent) }),
            ("MERGED", .right, { percentText($0.figures.mergedPercent) }),
            ("NAIVE LOSS", .right, { percentText($0.figures.naiveReaderLossPercent) }),
            ("MALFORMED", .right, { String($0.figures.malformed) }),
        ]
        // Dropped in this order until the table fits.
        let expendable = ["CLIENT", "MERGED", "PARTIAL", "MSG/S", "SERVER", "MALFORMED"]
        var kept = columns
        for dropping in [nil] + expendable.map(Optional.some) {
            if let dropping { kept.removeAll { $0.0 == dropping } }
            var table = TextTable(kept.map { ($0.0, $0.1) })
            for row in rows { table.append(kept.map { $0.2(row) }) }
            let text = table.render()
            if dropping == expendable.last || text.split(separator: "\n").allSatisfy({ $0.count <= width }) { return out + text }
        }
        return out
    }

    /// Redraws in place: home, each line cut to the width and cleared to its end, the rest cleared.
    private func draw(_ screen: String, width: Int) {
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        write("\u{1B}[H" + lines.map { fit($0, width) + "\u{1B}[K\n" }.joined() + "\u{1B}[J")
    }

    /// `line` cut to `width` visible characters (escape sequences take no room and are kept).
    private func fit(_ line: Substring, _ width: Int) -> String {
        var out = "", visible = 0, inEscape = false
        for c in line {
            if c == "\u{1B}" { inEscape = true }
            if inEscape {
                out.append(c)
                if c.isLetter { inEscape = false }
                continue
            }
            guard visible < width else { continue }
            out.append(c)
            visible += 1
        }
        return out + (color ? "\u{1B}[0m" : "")
    }

    /// The terminal's size (TIOCGWINSZ), 80×24 when it does not say.
    private func terminalSize() -> (columns: Int, rows: Int) {
        var size = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
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
