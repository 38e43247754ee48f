/// Where framing is not known to be right (a pickup, a malformed header, a gap of unknown end):
/// the bytes go to `recovery`'s window, and framing starts again at the boundary it finds.
extension DirectionAnalyzer {
    mutating func startRecovery(
        _ cause: FramingRecovery.Cause, at offset: Int64, keeping kept: [UInt8], segment: SegmentMark, later: [SegmentMark] = [],
        candidateFrom: Int, malformedEvent: AnalysisEvent? = nil, context: inout AnalysisContext
    ) {
        mode = .recovering
        cutter.reset()
        recovery.begin(
            cause, at: offset, keeping: kept, segment: segment, later: later, candidateFrom: candidateFrom, malformedEvent: malformedEvent,
            budget: &context.recoveryBudget)
    }

    /// Fresh bytes while searching go to the window; a full window is decided on at once and,
    /// without a boundary, slides on.
    mutating func keepForRecovery(_ bytes: UnsafeRawBufferPointer, segment: SegmentMark, context: inout AnalysisContext) {
        var rest = bytes
        while !rest.isEmpty {
            guard mode == .recovering else {
                analysis.undissectedBytes += Int64(rest.count)  // given up
                return
            }
            guard let taken = recovery.append(rest, segment: segment, budget: &context.recoveryBudget) else {
                context.recoveryBudget.exhausted += 1
                countSkipped(Int64(rest.count))
                giveUp(context: &context)
                return
            }
            rest = UnsafeRawBufferPointer(rebasing: rest[taken...])
            guard recovery.isFull else { continue }
            let restOffset = recovery.start + Int64(recovery.bytes.count)
            if decide(endIsSegmentEnd: false, context: &context) {
                if !rest.isEmpty { feed(rest, at: restOffset, segment: segment, context: &context) }
                return
            }
            if recovery.hasSearchedTooLong {
                countSkipped(Int64(rest.count))
                giveUp(context: &context)
                return
            }
            countSkipped(Int64(recovery.slide(budget: &context.recoveryBudget)))
        }
    }

    /// Decides while a decision is due (at a segment's end), or once and for all (`final`: at a
    /// gap or the end, where the window's bytes without a boundary are left undissected).
    mutating func settle(final: Bool, context: inout AnalysisContext) {
        while mode == .recovering && (final || recovery.isDue) {
            if recovery.bytes.isEmpty || !decide(endIsSegmentEnd: true, context: &context) {
                if final { endWithoutBoundary(context: &context) }
                return
            }
        }
    }

    /// Looks for the best-supported boundary; replays the window from it, part by part, when it
    /// clears the bar.
    private mutating func decide(endIsSegmentEnd: Bool, context: inout AnalysisContext) -> Bool {
        guard let found = recovery.decide(with: cutter.shared, endIsSegmentEnd: endIsSegmentEnd, budget: &context.recoveryBudget) else {
            return false
        }
        let skipped = recovery.slid + Int64(found.offset)
        countSkipped(Int64(found.offset))
        let bits = found.bits.isFinite ? found.bits : nil
        if let bits { analysis.boundaryEvidenceBits = min(analysis.boundaryEvidenceBits ?? bits, bits) }
        switch recovery.cause {
        case .midStream:
            break
        case .malformed:
            analysis.resyncs += 1
            if var e = recovery.malformedEvent {
                e.length = skipped
                e.evidenceBits = bits
                e.looksLike = looksLike(e)
                context.evidence.add(e)
            }
        case .gap:
            analysis.resyncs += 1
            var e = event(.resynchronized, at: recovery.start - recovery.slid, in: recovery.firstSegment, bytes: Array(recovery.bytes.prefix(16)), length: skipped)
            e.evidenceBits = bits
            context.evidence.add(e)
        }
        let cause = recovery.cause
        let (bytes, parts, start) = recovery.take(budget: &context.recoveryBudget)
        mode = .framing
        if cause == .midStream, let tail = parts.last(where: { $0.at <= found.offset }), tail.at < found.offset {
            // The segment that carried the leading tail carries a second message if it goes on.
            var merged: SegmentLedger.Merged?
            ledger.enter(tail.segment, messageOpen: false, figures: &analysis, merged: &merged)
            noteMerged(merged, context: &context)
            ledger.countLeadingTail()
        }
        bytes.withUnsafeBytes { all in
            for (k, part) in parts.enumerated() {
                let from = max(part.at, found.offset), to = k + 1 < parts.count ? parts[k + 1].at : all.count
                guard from < to else { continue }
                feed(all.slice(from: from, count: to - from), at: start + Int64(from), segment: part.segment, context: &context)
            }
        }
        return true
    }

    /// A search that ends (at a gap or the end) without a boundary: its bytes stay undissected.
    private mutating func endWithoutBoundary(context: inout AnalysisContext) {
        if !recovery.bytes.isEmpty { analysis.boundariesNotFound += 1 }  // an empty window searched nothing
        countSkipped(Int64(recovery.bytes.count))
        closeMalformedEvent(context: &context)
        recovery.abandon(budget: &context.recoveryBudget)
    }

    /// Searched bytes no frame starts in: the tail of a message sent before the capture began
    /// (mid-stream), else junk.
    private mutating func countSkipped(_ count: Int64) {
        guard count > 0 else { return }
        if recovery.cause == .midStream { analysis.leadingBytes += count } else { analysis.undissectedBytes += count }
    }

    /// The junk region after a malformed header ends without framing resuming.
    private mutating func closeMalformedEvent(context: inout AnalysisContext) {
        guard var e = recovery.malformedEvent else { return }
        e.length = recovery.slid + Int64(recovery.bytes.count)
        e.looksLike = looksLike(e)
        context.evidence.add(e)
    }

    /// What the malformed header's bytes look like, from the junk region while its start is kept.
    private func looksLike(_ e: AnalysisEvent) -> String? {
        let bytes = recovery.slid == 0 ? Array(recovery.bytes.prefix(256)) : e.bytes
        return HeaderForensics.describe(bytes, reason: e.reason, dissector: cutter.shared.dissector)
    }

    private mutating func giveUp(context: inout AnalysisContext) {
        analysis.stopped = true
        countSkipped(Int64(recovery.bytes.count))
        closeMalformedEvent(context: &context)
        context.evidence.add(connection, event(.gaveUp, at: recovery.start, in: recovery.firstSegment, bytes: Array(recovery.bytes.prefix(16)), length: Int64(recovery.bytes.count)))
        recovery.abandon(budget: &context.recoveryBudget)
        mode = .stopped
    }
}
