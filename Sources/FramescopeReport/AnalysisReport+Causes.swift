import FramescopeCore

/// Why messages were split and glued, in words: the causes of `SplitCause`, largest share first.
extension AnalysisReport.Figures {
    /// "why: 80% the MSS …, 20% the application's writes …", nil when nothing was split.
    var partialWhy: String? { Self.why(partialCauses, kind: .partial) }
    /// The same for merged segments.
    var mergedWhy: String? { Self.why(mergedCauses, kind: .merged) }

    static func why(_ counts: [String: Int], kind: SplitExample.Kind) -> String? {
        let total = counts.values.reduce(0, +)
        guard total > 0 else { return nil }
        let ranked = SplitCause.allCases.compactMap { c in counts[c.description].map { (c, $0) } }.sorted { $0.1 > $1.1 }
        return "why: " + ranked.map { "\(percentText(percent($0.1, of: total))) \($0.0.explanation(kind))" }.joined(separator: ", ")
    }
}

extension SplitCause {
    /// What the cause means for a split message or a glued segment.
    func explanation(_ kind: SplitExample.Kind) -> String {
        switch (self, kind) {
        case (.offload, _): "segmentation offload at the capture host (segments longer than the MSS; see --mss)"
        case (.mss, .partial): "full segments (messages longer than the MSS, or sent behind others)"
        case (.mss, .merged): "full segments (the sender had queued more than one segment's worth)"
        case (.window, _): "the receiver's window (segments ended at its edge)"
        case (.retransmission, _): "retransmissions that repacketized the bytes"
        case (.nagle, _): "Nagle (small writes held until the ACK, sent together)"
        case (.writes, .partial): "the application's writes (a message in several send()s)"
        case (.writes, .merged): "the application's writes (several messages in one send(), or sent faster than segments left)"
        }
    }
}
