/// Why a message arrived in pieces (partial) or a segment carried several messages (merged),
/// judged from how its segments were sent (`SegmentTraits`). One cause each, the first that
/// applies in this order.
public enum SplitCause: Int, CaseIterable, Sendable, CustomStringConvertible {
    /// Segments longer than the MSS: TSO/GSO on the sending host or GRO/LRO on the receiving
    /// one cut them, at the capture point, not the wire.
    case offload
    /// A full segment: the message was longer than the MSS, or the sender had queued more than
    /// one segment's worth (it was ahead of the network).
    case mss
    /// The segment ended at the edge of the receiver's advertised window.
    case window
    /// A retransmission repacketized bytes of several original segments.
    case retransmission
    /// Merged only: small writes held while earlier data was unacknowledged, sent together on
    /// the ACK (Nagle's algorithm, with the receiver's delayed ACK).
    case nagle
    /// Nothing in TCP forced it: the application wrote the message in several `send()`s, or
    /// several messages in one.
    case writes

    public var description: String {
        switch self {
        case .offload: "offload"
        case .mss: "mss"
        case .window: "window"
        case .retransmission: "retransmission"
        case .nagle: "nagle"
        case .writes: "writes"
        }
    }

    /// Why a message was split: `before` holds the traits of the segments before its boundaries
    /// (together), `last` those of its last segment. An offloaded segment anywhere decides.
    static func partial(before: SegmentTraits, last: SegmentTraits) -> SplitCause {
        let all = before.union(last)
        if all.contains(.overMSS) { return .offload }
        if before.contains(.fullSized) { return .mss }
        if before.contains(.windowLimited) { return .window }
        if all.contains(.retransmitted) { return .retransmission }
        return .writes
    }

    /// Why one segment carried bytes of several messages.
    static func merged(_ segment: SegmentTraits) -> SplitCause {
        if segment.contains(.overMSS) { return .offload }
        if segment.contains(.retransmitted) { return .retransmission }
        if segment.contains(.fullSized) { return .mss }
        if segment.contains(.windowLimited) { return .window }
        if segment.contains(.releasedByAck) { return .nagle }
        return .writes
    }
}

/// Partial messages or merged segments counted by cause: six counters in place (24 bytes, no
/// allocation), as 50,000 connections carry two of these.
public struct CauseCounts: Sendable, Equatable {
    private var offload: UInt32 = 0, mss: UInt32 = 0, window: UInt32 = 0
    private var retransmission: UInt32 = 0, nagle: UInt32 = 0, writes: UInt32 = 0

    public init() {}

    public subscript(cause: SplitCause) -> Int {
        get {
            switch cause {
            case .offload: Int(offload)
            case .mss: Int(mss)
            case .window: Int(window)
            case .retransmission: Int(retransmission)
            case .nagle: Int(nagle)
            case .writes: Int(writes)
            }
        }
        set {
            let n = UInt32(clamping: newValue)
            switch cause {
            case .offload: offload = n
            case .mss: mss = n
            case .window: window = n
            case .retransmission: retransmission = n
            case .nagle: nagle = n
            case .writes: writes = n
            }
        }
    }

    public var total: Int { SplitCause.allCases.reduce(0) { $0 + self[$1] } }

    /// The causes that counted anything, most first (ties in declaration order).
    public var ranked: [(cause: SplitCause, count: Int)] {
        SplitCause.allCases.map { ($0, self[$0]) }.filter { $0.1 > 0 }.sorted { $0.1 > $1.1 || ($0.1 == $1.1 && $0.0.rawValue < $1.0.rawValue) }
    }

    /// By name, the causes that counted.
    public var dictionary: [String: Int] {
        Dictionary(uniqueKeysWithValues: ranked.map { ($0.cause.description, $0.count) })
    }

    public mutating func merge(_ other: CauseCounts) {
        for cause in SplitCause.allCases { self[cause] += other[cause] }
    }
}

/// Both counts of a direction, and its partial and glued messages by type value, kept out of
/// line: allocated at its first partial or merged.
struct SplitCauses: Sendable, Equatable, Blank {
    var partial = CauseCounts()
    var merged = CauseCounts()

    mutating func merge(_ other: SplitCauses) {
        partial.merge(other.partial)
        merged.merge(other.merged)
    }
}
