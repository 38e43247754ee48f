/// Where a segment's bytes came from, for the ledger (what carried them) and the evidence.
struct SegmentMark: Equatable {
    /// Stream offset of the segment's first byte.
    var start: Int64
    var frame: UInt64
    var timestamp: Timestamp

    static let none = SegmentMark(start: 0, frame: 0, timestamp: .zero)

    /// The same segment (a replayed part of it counts as the segment itself).
    func isSame(as other: SegmentMark) -> Bool { start == other.start && frame == other.frame }
}

/// Bytes held in all recovery windows together, and the most allowed: past it a direction that
/// needs a window gives up instead (`exhausted` counts those).
public struct RecoveryBudget: Sendable {
    public internal(set) var inUse = 0
    public var limit = 32 << 20
    public internal(set) var exhausted = 0
}

/// Finds where framing starts again after a malformed header or a gap whose end is unknown.
///
/// The rule today: keep up to `window` bytes and take the first offset where two consecutive
/// frames decode (with a magic, only where the magic matches; with delimiters, right after the
/// next delimiter). The analyzer feeds it bytes while it searches and replays the window from
/// what it finds, segment by segment, so the replayed bytes keep their provenance.
struct FramingRecovery {
    static let window = 64 << 10

    /// Window bytes, from stream offset `start`.
    private(set) var bytes: [UInt8] = []
    private(set) var start: Int64 = 0
    /// Where each segment's part of the window begins.
    private(set) var parts: [(at: Int, segment: SegmentMark)] = []
    private var nextCandidate = 0

    var isFull: Bool { bytes.count >= Self.window }

    /// The segment that carried the window's first byte.
    var firstSegment: SegmentMark { parts.first?.segment ?? .none }

    /// Starts a search at `offset` with `kept` bytes already known to follow it (carried by
    /// `segment`); candidates are tried from window offset `candidateFrom`.
    mutating func begin(at offset: Int64, keeping kept: [UInt8], segment: SegmentMark, candidateFrom: Int, budget: inout RecoveryBudget) {
        budget.inUse += kept.count
        bytes = kept
        start = offset
        parts = kept.isEmpty ? [] : [(0, segment)]
        nextCandidate = candidateFrom
    }

    enum Appended {
        /// Kept, but for `overflow` bytes past the window's end.
        case kept(overflow: Int)
        /// The budget of all windows is spent: nothing kept.
        case overBudget
    }

    mutating func append(_ more: UnsafeRawBufferPointer, segment: SegmentMark, budget: inout RecoveryBudget) -> Appended {
        var room = Self.window - bytes.count
        if budget.inUse + min(room, more.count) > budget.limit {
            room = max(0, budget.limit - budget.inUse)
            if room == 0 { return .overBudget }
        }
        budget.inUse += min(room, more.count)
        if !(parts.last.map { $0.segment.isSame(as: segment) } ?? false) {
            parts.append((bytes.count, segment))
        }
        bytes.append(contentsOf: more.prefix(room))
        return .kept(overflow: max(0, more.count - room))
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
    }

    /// The first window offset from the last one tried where framing plausibly starts again.
    mutating func search(with dissector: AnyDissector) -> Int? {
        var atStreamStart = false  // framing starts again past the stream's start
        return bytes.withUnsafeBytes { w -> Int? in
            if let delimiter = dissector.delimiter {
                // Delimiter framing starts again right after the next delimiter.
                var i = max(nextCandidate, delimiter.count)
                while i <= w.count {
                    var matches = true
                    for k in 0..<delimiter.count where w[i - delimiter.count + k] != delimiter[k] { matches = false }
                    if matches { return i }
                    i += 1
                }
                nextCandidate = max(nextCandidate, w.count - delimiter.count + 1)
                return nil
            }
            while nextCandidate < w.count {
                let o = nextCandidate
                switch dissector.decode(w.dropFirst(o), consumed: 0, atStreamStart: &atStreamStart) {
                case .needMoreData:
                    return nil
                case .malformed:
                    nextCandidate += 1
                case .frame(let first, _, _), .preamble(let first):
                    if o + first >= Self.window {  // cannot be checked within the window
                        nextCandidate += 1
                        continue
                    }
                    if o + first >= w.count { return nil }
                    switch dissector.decode(w.dropFirst(o + first), consumed: 0, atStreamStart: &atStreamStart) {
                    case .frame, .preamble: return o
                    case .needMoreData: return nil
                    case .malformed: nextCandidate += 1
                    }
                }
            }
            return nil
        }
    }
}
