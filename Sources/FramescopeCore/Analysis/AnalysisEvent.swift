/// Evidence for the report: where framing went wrong, with enough to find it in Wireshark.
public struct AnalysisEvent: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case malformed
        case incompleteAtEnd = "incomplete-at-end"
        case damagedByGap = "damaged-by-gap"
        case resynchronized
        case gaveUp = "gave-up"
        /// A message body that is not protobuf wire data, or not the schema's type.
        case invalidProtobuf = "invalid-protobuf"
    }

    public var kind: Kind
    public var reason: MalformedReason?
    /// Why and where an `invalid-protobuf` body failed (the event's offset is the body's start).
    public var protobufFailure: ProtobufFailureSite? = nil
    public var connection: ConnectionID
    public var direction: Direction
    /// Stream offset (sequence space from the direction's first byte).
    public var offset: Int64
    /// Frame of the segment that carried the first byte at `offset`.
    public var frame: UInt64
    public var timestamp: Timestamp
    /// Up to 16 bytes at `offset` (the header that failed, or the start of the cut message).
    public var bytes: [UInt8] {
        get { evidence.array }
        set { evidence = InlineBytes(prefixOf: newValue) }
    }
    /// `bytes`, held in place: an event kept among the lowest allocates nothing for them (an
    /// array each was a fifth of keeping the events of 200,000 invalid bodies).
    var evidence: InlineBytes
    /// Bytes the event covers: skipped by a resync, missing from a damaged message, present
    /// of an incomplete one, or the length of an invalid body (whose first bytes `bytes` holds).
    /// For `malformed`: the junk region, from the header to where framing resumed.
    public var length: Int64
    /// For `malformed` and `resynchronized`: the evidence, in bits, for where framing resumed;
    /// nil when it did not.
    public var evidenceBits: Double? = nil
    /// For `malformed`: what the bytes look like (`HeaderForensics`), when something is recognised.
    public var looksLike: String? = nil

    public init(
        kind: Kind, reason: MalformedReason?, connection: ConnectionID, direction: Direction, offset: Int64, frame: UInt64,
        timestamp: Timestamp, bytes: [UInt8], length: Int64
    ) {
        self.init(
            kind: kind, reason: reason, connection: connection, direction: direction, offset: offset, frame: frame, timestamp: timestamp,
            evidence: InlineBytes(prefixOf: bytes), length: length)
    }

    init(
        kind: Kind, reason: MalformedReason?, connection: ConnectionID, direction: Direction, offset: Int64, frame: UInt64,
        timestamp: Timestamp, evidence: InlineBytes, length: Int64
    ) {
        self.kind = kind
        self.reason = reason
        self.connection = connection
        self.direction = direction
        self.offset = offset
        self.frame = frame
        self.timestamp = timestamp
        self.evidence = evidence
        self.length = length
    }
}

/// The evidence behind the partial and merged counts, a few per direction: a message that
/// arrived in two or more segments, or a segment that carried bytes of two or more messages.
public struct SplitExample: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case partial, merged
    }

    public var kind: Kind
    public var connection: ConnectionID
    public var direction: Direction
    /// Partial: the message's first byte; merged: the segment's first byte (stream offsets).
    public var offset: Int64
    /// Partial: the message's length; merged: 0.
    public var length: Int64
    /// Partial: the frames of its first and last segment; merged: the segment's frame, twice.
    public var firstFrame: UInt64
    public var lastFrame: UInt64
    /// Partial: segments the message spans; merged: messages the segment carries.
    public var count: Int
    public var timestamp: Timestamp
    /// Why it was split or glued.
    public var cause: SplitCause
}

/// Where a body stopped parsing: the reason, the offending byte's stream offset and its frame.
public struct ProtobufFailureSite: Sendable, Equatable {
    public var reason: ProtobufFailure
    public var offset: Int64
    public var frame: UInt64
}

/// One message, for `--messages`.
public struct MessageRecord: Sendable {
    public var connection: ConnectionID
    public var direction: Direction
    public var offset: Int64
    public var length: Int64
    public var type: UInt64?
    public var firstFrame: UInt64
    public var lastFrame: UInt64
    public var segments: Int
    public var firstTimestamp: Timestamp
    public var lastTimestamp: Timestamp
    public var damagedByGap: Bool
}

extension AnalysisEvent {
    /// An event at stream `offset`, found in (or starting in) `segment`.
    init(
        _ kind: Kind, reason: MalformedReason?, _ connection: ConnectionID, _ direction: Direction, at offset: Int64, in segment: SegmentMark,
        evidence: InlineBytes, length: Int64
    ) {
        self.init(
            kind: kind, reason: reason, connection: connection, direction: direction, offset: offset, frame: segment.frame,
            timestamp: segment.timestamp, evidence: evidence, length: length)
    }
}
