import FramescopeCore

/// The network's side of the story, beside the framing figures: round trips, retransmissions,
/// duplicate ACKs and zero windows (tshark's TCP analysis), so the engineer sees whether bytes
/// were lost on the wire or only in the receive loop.
extension AnalysisReport {
    public struct TCPContext: Sendable {
        /// Handshake round trips (SYN to the first ACK after it), seconds, over all connections.
        public var initialRTT: Distribution
        public var handshakes: Int
        public var clientToServer: TCPDirection
        public var serverToClient: TCPDirection
        /// Stream bytes the capture missed, in both directions (gaps).
        public var gapBytes: Int64
        /// What the round trips' distributions come from (the report's `sketches`).
        var initialRTTHistogram: QuantileHistogram
        var ackRTTHistograms: PerDirection<QuantileHistogram>

        public init(_ context: ReassemblyContext) {
            initialRTTHistogram = context.initialRTT
            ackRTTHistograms = context.ackRTT
            initialRTT = Distribution(microseconds: context.initialRTT)
            handshakes = context.initialRTT.count
            func direction(_ d: Direction) -> TCPDirection {
                TCPDirection(
                    ackRTT: Distribution(microseconds: context.ackRTT[d]), ackRTTSamples: context.ackRTT[d].count,
                    retransmissions: context.retransmissions[d], duplicateAcks: context.duplicateAcks[d], zeroWindows: context.zeroWindows[d],
                    windowFull: context.windowFull[d], outOfOrder: context.outOfOrder[d])
            }
            clientToServer = direction(.clientToServer)
            serverToClient = direction(.serverToClient)
            gapBytes = context.gapBytes.clientToServer + context.gapBytes.serverToClient
        }

        /// Nothing was sent twice, no receiver asked again: every byte crossed the wire once.
        public var nothingLostOnTheWire: Bool {
            [clientToServer, serverToClient].allSatisfy { $0.retransmissions == 0 && $0.duplicateAcks == 0 }
        }
    }

    /// One direction's data: its segments' round trips to their ACKs, and what the receiver and
    /// the sender did about losses.
    public struct TCPDirection: Sendable {
        /// Seconds from a segment to the ACK of exactly its end (tshark's `tcp.analysis.ack_rtt`).
        public var ackRTT: Distribution
        public var ackRTTSamples: Int
        /// Segments carrying bytes already sent (framescope's reassembly, as in `flows`).
        public var retransmissions: Int
        /// The receiver's repeated ACKs, and the times it announced a zero window.
        public var duplicateAcks: Int
        public var zeroWindows: Int
        /// Segments that filled the receiver's window to its edge.
        public var windowFull: Int
        /// Segments that arrived ahead of a hole (reordered, or after a loss) and were held.
        public var outOfOrder: Int
    }
}

extension AnalysisReport.TCPContext {
    func write(to w: inout JSONWriter) {
        w.object { w in
            w.key("clientToServer")
            clientToServer.write(to: &w)
            w.field("gapBytes", gapBytes)
            w.field("handshakes", handshakes)
            w.key("initialRTT")
            initialRTT.write(to: &w)
            w.key("serverToClient")
            serverToClient.write(to: &w)
        }
    }

    /// The headline ("no byte was lost on the wire: a receiver that reads one message per
    /// `read()` loses 72% of them — fix the receive loop"), then a line a direction.
    func textLines(naiveLossPercent: Double, directions: [(label: String, from: String, to: String)]) -> [String] {
        var lines: [String] = []
        var head = "TCP: "
        if nothingLostOnTheWire && gapBytes > 0 {
            // The endpoints had every byte (no sender repeated one), the capture did not.
            head += "no segment was sent twice, but the capture missed \(counted(gapBytes, "byte")) the endpoints received "
                + "(it dropped packets, or started or ended mid-connection): messages near those gaps are not counted whole"
        } else if nothingLostOnTheWire {
            head += "no byte was lost on the wire"
            if naiveLossPercent > 0 {
                head += ": a receiver that reads one message per read() loses \(percentText(naiveLossPercent)) of them"
                    + " — fix the receive loop (read until the length is complete, then cut every message in the buffer)"
            }
        } else {
            head += "the network lost or reordered segments (retransmissions and duplicate ACKs below)"
        }
        if handshakes > 0 {
            head += "; handshake round trip \(duration(initialRTT.p50)) (median of \(counted(handshakes, "handshake")))"
        }
        lines.append(head)
        for (d, (label, _, to)) in zip([clientToServer, serverToClient], directions) {
            var parts: [String] = []
            if d.ackRTTSamples > 0 {
                parts.append("data to its ACK \(duration(d.ackRTT.p50)) median, p99 \(duration(d.ackRTT.p99)), max \(duration(d.ackRTT.max))")
            }
            parts.append(counted(d.retransmissions, "retransmission"))
            if d.outOfOrder > 0 { parts.append("\(d.outOfOrder) out of order") }
            parts.append("\(counted(d.duplicateAcks, "duplicate ACK")) from the \(to)")
            if d.zeroWindows > 0 { parts.append("the \(to) announced a zero window \(counted(d.zeroWindows, "time"))") }
            if d.windowFull > 0 { parts.append("\(counted(d.windowFull, "segment")) filled the \(to)'s window") }
            lines.append("  \(label): " + parts.joined(separator: ", "))
        }
        return lines
    }
}

extension AnalysisReport.TCPDirection {
    func write(to w: inout JSONWriter) {
        w.object { w in
            w.key("ackRTT")
            ackRTT.write(to: &w)
            w.field("ackRTTSamples", ackRTTSamples)
            w.field("duplicateAcks", duplicateAcks)
            w.field("outOfOrder", outOfOrder)
            w.field("retransmissions", retransmissions)
            w.field("windowFull", windowFull)
            w.field("zeroWindows", zeroWindows)
        }
    }
}

/// "0.052 ms", "3.1 ms", "1.20 s".
func duration(_ s: Double) -> String {
    if s < 0.01 { return milliseconds(s) }
    if s < 1 { return formatted(s * 1000, decimals: 1) + " ms" }
    return formatted(s, decimals: 2) + " s"
}

/// Seconds as milliseconds to the microsecond: "12.288 ms".
func milliseconds(_ s: Double) -> String { formatted(s * 1000, decimals: 3) + " ms" }

private func formatted(_ x: Double, decimals: Int) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let n = Int64((x * scale).rounded())
    let whole = n / Int64(scale), fraction = n % Int64(scale)
    guard decimals > 0 else { return String(whole) }
    let digits = String(fraction)
    return String(whole) + "." + String(repeating: "0", count: decimals - digits.count) + digits
}
