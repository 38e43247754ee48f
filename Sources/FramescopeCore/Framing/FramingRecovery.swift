/// Where a segment's bytes came from, for the ledger (what carried them) and the evidence.
struct SegmentMark: Equatable {
    /// Stream offset of the segment's first byte.
    var start: Int64
    var frame: UInt64
    var timestamp: Timestamp
    /// How it was sent: what a split or a merge in it is attributed to.
    var traits: SegmentTraits = []
    /// Which piece of its frame, when `--mss` re-cuts a segment longer than the wire's.
    var piece: UInt32 = 0

    static let none = SegmentMark(start: 0, frame: 0, timestamp: .zero)

    /// The same segment: one frame carries one segment, whether its bytes come in one piece, in
    /// parts (reassembly may hand a segment over in several), or replayed after a search.
    func isSame(as other: SegmentMark) -> Bool { frame == other.frame && piece == other.piece }
}

/// Bytes held in all recovery windows together, and the most allowed: past it a direction that
/// needs a window gives up instead (`exhausted` counts those).
public struct RecoveryBudget: Sendable {
    public internal(set) var inUse = 0
    public var limit = 32 << 20
    public internal(set) var exhausted = 0
    /// Evidence a boundary needs by default, in bits: no false boundary in 10,000 random
    /// streams per dissector (RecoveryPropertyTests).
    public static let defaultThreshold = 32.0
    /// Evidence a boundary needs, in bits (see `BoundaryEvidence`).
    public var threshold = defaultThreshold
    /// The scorer's scratch space, shared by every direction (one decides at a time).
    var scores: [Double] = []
    var types: [UInt64] = []
}

/// Finds where framing starts when it is not known to be right: in a direction picked up in the
/// middle of a connection, after a malformed header, after a gap whose end is unknown.
///
/// The analyzer keeps the bytes that follow in a window and asks for a decision when one is due
/// (at segment ends, each time the window has doubled, at a gap, at the end, when it is full).
/// Every offset is a candidate start, scored by the chain of frames after it
/// (`FrameChainScorer`); the best wins only with `threshold` bits of evidence. Without one, a
/// full window slides on by half; past `searchLimit` bytes the direction is given up. With
/// delimiter framing a frame starts right after the next delimiter: nothing to weigh.
struct FramingRecovery: Blank {
    enum Cause {
        /// The direction began without a SYN: the bytes before the first boundary are the tail
        /// of a message sent before the capture started (`leadingBytes`).
        case midStream
        /// A header did not parse: the bytes up to the next boundary are junk (undissected).
        case malformed
        /// A gap whose end could not be computed.
        case gap
    }

    static let window = 64 << 10
    static let searchLimit: Int64 = 1 << 20
    private static let firstEvaluation = 256

    private(set) var cause = Cause.malformed
    /// Window bytes, from stream offset `start`.
    private(set) var bytes: [UInt8] = []
    private(set) var start: Int64 = 0
    /// Where each segment's part of the window begins.
    private(set) var parts: [(at: Int, segment: SegmentMark)] = []
    /// Bytes searched and slid out of the window, before `start`.
    private(set) var slid: Int64 = 0
    /// The first window offset that may start a frame.
    private var from = 0
    private var nextEvaluation = firstEvaluation
    /// The malformed header's event, waiting for the junk region's length.
    private(set) var malformedEvent: AnalysisEvent?

    var isFull: Bool { bytes.count >= Self.window }
    var isDue: Bool { bytes.count >= nextEvaluation }
    var hasSearchedTooLong: Bool { slid + Int64(bytes.count) >= Self.searchLimit }

    /// The segment that carried the window's first byte.
    var firstSegment: SegmentMark { parts.first?.segment ?? .none }

    /// Whether bytes of `segment` would start a new part (the window's segments so far are then complete).
    func startsNewSegment(_ segment: SegmentMark) -> Bool { !(parts.last?.segment.isSame(as: segment) ?? false) }

    /// Starts a search at `offset` with `kept` bytes (carried by `segment`, and by `later`
    /// segments from where they start) already known to follow it; frames may start from window
    /// offset `candidateFrom`.
    mutating func begin(
        _ cause: Cause, at offset: Int64, keeping kept: [UInt8], segment: SegmentMark, later: [SegmentMark] = [], candidateFrom: Int,
        malformedEvent: AnalysisEvent? = nil, budget: inout RecoveryBudget
    ) {
        budget.inUse += kept.count
        self.cause = cause
        bytes = kept
        start = offset
        // Kept bytes may span segments (a header read over several): each starts a part where it
        // starts, so the search knows which window offsets are segment starts however they came.
        parts = kept.isEmpty ? [] : [(0, segment)] + later.compactMap { mark in
            let at = mark.start - offset
            return at > 0 && at < Int64(kept.count) ? (Int(at), mark) : nil
        }
        slid = 0
        from = candidateFrom
        nextEvaluation = Self.firstEvaluation
        self.malformedEvent = malformedEvent
    }

    /// Keeps bytes from the front of `more` up to the window's end; returns how many, or nil when
    /// the budget of all windows is spent (nothing kept).
    mutating func append(_ more: UnsafeRawBufferPointer, segment: SegmentMark, budget: inout RecoveryBudget) -> Int? {
        let room = min(Self.window - bytes.count, budget.limit - budget.inUse)
        guard room > 0 else { return nil }
        let taken = min(room, more.count)
        budget.inUse += taken
        if startsNewSegment(segment) { parts.append((bytes.count, segment)) }
        bytes.append(contentsOf: more.prefix(taken))
        return taken
    }

    /// The best-supported frame start in the window, if it has `budget.threshold` bits of
    /// evidence. The next decision is due when the window has doubled.
    mutating func decide(with dissector: SharedDissector, endIsSegmentEnd: Bool, budget: inout RecoveryBudget) -> BoundaryHypothesis? {
        nextEvaluation = min(Self.window, max(Self.firstEvaluation, 2 * bytes.count))
        if let delimiter = dissector.dissector.delimiter { return afterDelimiter(delimiter) }
        // A pickup or a gap begins at a segment start by construction: no evidence there (its
        // lower bar says what that start is worth).
        let blind = startsBlind
        let starts = parts.compactMap { $0.segment.start == start + Int64($0.at) && ($0.at > 0 || !blind) ? $0.at : nil }
        let found = bytes.withUnsafeBytes { w in
            FrameChainScorer(dissector: dissector.dissector, evidence: dissector.evidence)
                .best(in: w, from: from, segmentStarts: starts, endIsSegmentEnd: endIsSegmentEnd, blindStart: blind, scores: &budget.scores, types: &budget.types)
        }
        // Where a direction is picked up or a gap ends at a segment start, that one offset is as
        // likely a message start as not (senders write whole messages), where any other offset
        // is one of tens of thousands: it needs half the bits (the other half is what the bar
        // spends on trying every offset).
        guard let found, found.bits >= (found.offset == 0 && blind ? budget.threshold / 2 : budget.threshold) else { return nil }
        return found
    }

    /// The window starts where a direction was picked up or a gap ended, at a segment's start.
    private var startsBlind: Bool {
        slid == 0 && cause != .malformed && parts.first.map { $0.at == 0 && $0.segment.start == start } == true
    }

    /// Delimiter framing starts again right after the next delimiter.
    private mutating func afterDelimiter(_ delimiter: InlineBytes) -> BoundaryHypothesis? {
        let n = bytes.count
        var i = max(from, delimiter.count)
        while i <= n {
            var matches = true
            for k in 0..<delimiter.count where bytes[i - delimiter.count + k] != delimiter[k] { matches = false }
            if matches { return BoundaryHypothesis(offset: i, bits: .infinity) }
            i += 1
        }
        from = max(from, n - delimiter.count + 1)
        return nil
    }

    /// Drops the window's first half (no frame starts there); returns how many bytes.
    mutating func slide(budget: inout RecoveryBudget) -> Int {
        let dropped = bytes.count / 2
        bytes.removeFirst(dropped)
        budget.inUse -= dropped
        start += Int64(dropped)
        slid += Int64(dropped)
        from = max(0, from - dropped)
        // The part straddling the cut begins the window now; earlier ones are gone.
        let kept = parts.lastIndex { $0.at <= dropped } ?? 0
        parts = parts[kept...].map { (max(0, $0.at - dropped), $0.segment) }
        nextEvaluation = Self.window
        return dropped
    }

    /// Ends the search, handing back the window (its bytes leave the budget).
    mutating func take(budget: inout RecoveryBudget) -> (bytes: [UInt8], parts: [(at: Int, segment: SegmentMark)], start: Int64) {
        defer { abandon(budget: &budget) }
        return (bytes, parts, start)
    }

    /// Ends the search and drops the window.
    mutating func abandon(budget: inout RecoveryBudget) {
        budget.inUse -= bytes.count
        bytes = []
        parts = []
        malformedEvent = nil
    }
}
