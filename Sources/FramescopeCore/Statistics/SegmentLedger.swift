/// Which segments carried which messages, for one direction: partial messages (a message in
/// two or more segments), merged segments (a segment with bytes of two or more messages) and
/// the messages a one-read-one-message receiver loses.
///
/// A segment's message count ("touches") is final only once the messages it carries are
/// settled: the segments a message in progress spans wait until it completes (each then gets
/// one more) or turns out not to be a message (malformed, preamble, damaged by a gap).
struct SegmentLedger {
    /// The segment whose bytes are being framed.
    private(set) var segment = SegmentMark.none
    private var touches = 0
    /// Earlier segments the message in progress spans, with their touches so far.
    private var spanned: [(touches: Int, segment: SegmentMark)] = []
    /// The last merged segment settled, the messages it carried and why, until the analyzer takes
    /// it as an example (nil most of the time: settling is where merges are known).
    typealias Merged = (segment: SegmentMark, messages: Int, cause: SplitCause)
    /// Segments the message in progress spans so far.
    private(set) var messageSegments = 0
    // The flags last, after the words: every direction that carries bytes holds a ledger.
    private var hasSegment = false
    private var messageStartsSegment = false

    /// Bytes of `next` follow, inside a message in progress or not; a part of the current
    /// segment (a replay) changes nothing.
    mutating func enter(_ next: SegmentMark, messageOpen: Bool, figures: inout DirectionAnalysis, merged: inout Merged?) {
        if hasSegment && segment.isSame(as: next) { return }
        if hasSegment && messageOpen {
            // A long message: room for 64 at once, not three doublings from 8 (given back at its end).
            if spanned.count >= 8 && spanned.count < 64 && spanned.count == spanned.capacity { spanned.reserveCapacity(64) }
            spanned.append((touches, segment))
            messageSegments += 1
        } else {
            finish(figures: &figures, merged: &merged)
        }
        segment = next
        touches = 0
        hasSegment = true
    }

    /// The segments the message in progress spans so far, from its first to the current one.
    var messageSegmentMarks: [SegmentMark] { spanned.map(\.segment) + (hasSegment ? [segment] : []) }

    /// The segment the message in progress began in (the current one until it spans more).
    var messageFirstSegment: SegmentMark { spanned.first?.segment ?? segment }

    /// The current segment already carries a message (or a leading tail): a message beginning
    /// now shares it.
    var segmentCarriesAMessage: Bool { hasSegment && touches > 0 }

    /// A message starts at `offset`, in the current segment.
    mutating func beginMessage(at offset: Int64) {
        messageSegments = 1
        messageStartsSegment = offset == segment.start
    }

    /// The current segment carries the tail of a message sent before the capture began: it
    /// counts as one of the messages the segment carries.
    mutating func countLeadingTail() { touches += 1 }

    /// The message in progress was none: the segments it spans settle without it.
    mutating func dropMessage(figures: inout DirectionAnalysis, merged: inout Merged?) {
        settle(touched: false, figures: &figures, merged: &merged)
    }

    /// The message in progress completed in the current segment; returns why it was split, if
    /// it was.
    mutating func countMessage(figures f: inout DirectionAnalysis, merged: inout Merged?) -> SplitCause? {
        var cause: SplitCause?
        if messageSegments >= 2 {
            var before: SegmentTraits = []
            for s in spanned { before.formUnion(s.segment.traits) }
            cause = SplitCause.partial(before: before, last: segment.traits)
            f.partialMessages += 1
            f.partialCauses[cause!] += 1
            f.timeline.add(.partial, at: segment.timestamp)
        }
        settle(touched: true, figures: &f, merged: &merged)
        f.segmentsPerMessage.add(messageSegments)
        // Safe only when it starts a segment and ends in it: the first message of a read.
        if !(messageStartsSegment && messageSegments == 1) { f.naiveReaderLoss += 1 }
        return cause
    }

    /// Settles everything still open (at the end of the direction).
    mutating func finish(figures: inout DirectionAnalysis, merged: inout Merged?) {
        settle(touched: false, figures: &figures, merged: &merged)
        if hasSegment { record(touches: touches, in: segment, figures: &figures, merged: &merged) }
        hasSegment = false
    }

    private mutating func settle(touched: Bool, figures: inout DirectionAnalysis, merged: inout Merged?) {
        if touched { touches += 1 }
        for s in spanned { record(touches: s.touches + (touched ? 1 : 0), in: s.segment, figures: &figures, merged: &merged) }
        // The room of a few segments is kept; a long message's (64 KiB spans 45: 1.8 KB) is
        // given back, or every direction that ever carried one held it.
        if spanned.count > 8 {
            spanned = []
            spanned.reserveCapacity(8)
        } else if !spanned.isEmpty {  // (most messages span none: the call costs 60 instructions)
            spanned.removeAll(keepingCapacity: true)
        }
    }

    private func record(touches: Int, in segment: SegmentMark, figures f: inout DirectionAnalysis, merged: inout Merged?) {
        if touches > 0 { f.messagesPerSegment.add(touches) }
        if touches >= 2 {
            let cause = SplitCause.merged(segment.traits)
            f.mergedSegments += 1
            f.mergedCauses[cause] += 1
            f.timeline.add(.merged, at: segment.timestamp)
            merged = (segment, touches, cause)
        }
    }
}
