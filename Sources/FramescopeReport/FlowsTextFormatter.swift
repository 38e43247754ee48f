import FramescopeCore

/// `flows --format text`: one aligned row per connection, then what was skipped.
public enum FlowsTextFormatter {
    public static func render(_ report: FlowsReport) -> String {
        let clock = HumanClock(inputs: report.inputs)
        var table = TextTable([
            ("ID", .right), ("CLIENT", .left), ("", .left), ("SERVER", .left), ("FIRST", .left),
            ("DURATION", .right), ("PKTS", .right), ("C→S BYTES", .right), ("S→C BYTES", .right),
            ("RETRANS", .right), ("OOO", .right), ("CONFLICTS", .right), ("GAPS", .right), ("START", .left), ("END", .left),
        ])
        for c in report.connections {
            let (up, down) = (c.directions[0], c.directions[1])
            let gaps = up.gaps.count + down.gaps.count
            table.append([
                String(c.id), c.client, "→", c.server, clock.iso(c.firstSeen), String(format3(c.durationSeconds)) + "s",
                String(c.packets), String(up.bytes), String(down.bytes),
                String(up.retransmissions + down.retransmissions), String(up.outOfOrder + down.outOfOrder),
                String(up.conflicts.count + down.conflicts.count),
                gaps == 0 ? "0" : "\(gaps) (\(up.gaps.bytes + down.gaps.bytes) B)",
                c.start, c.end,
            ])
        }
        var text = table.render()
        text += "\n\(counted(report.connections.count, "connection")), \(counted(report.packets.total, "packet")) (\(report.packets.tcp) TCP"
        if !report.packets.skipped.isEmpty {
            let reasons = report.packets.skipped.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            text += "; skipped: " + reasons.joined(separator: ", ")
        }
        text += ")\n"
        if clock.zone != nil || clock.unavailableZone != nil { text += "times in \(clock.label)\n" }
        let limited = report.limits.bufferLimitGaps + report.limits.connectionLimitEvictions
        if limited > 0 {
            text += "warning: memory limits were reached: \(counted(report.limits.bufferLimitGaps, "hole")) skipped early, "
                + "\(counted(report.limits.connectionLimitEvictions, "connection")) finalized early\n"
        }
        return text
    }

    static func format3(_ value: Double) -> String {
        let thousandths = Int64((value * 1000).rounded())
        let fraction = String(thousandths % 1000)
        return "\(thousandths / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
