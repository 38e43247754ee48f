/// What the dissector found in one direction of a connection. Definitions in the README.
public struct DirectionAnalysis: Sendable, Equatable {
    public var messages = 0
    public var messageBytes: Int64 = 0
    public var sizes = QuantileHistogram()
    private var typeCounts = ValueCounts()
    /// Segments that carried bytes this dissector looked at (contributed new stream bytes).
    public var segments = 0
    /// Messages whose bytes arrived in two or more segments, and segments per message.
    public var partialMessages = 0
    public var segmentsPerMessage = CountHistogram()
    /// Segments holding bytes of two or more messages, and messages per segment.
    public var mergedSegments = 0
    public var messagesPerSegment = CountHistogram()
    /// Messages a receiver parsing one message per read would lose.
    public var naiveReaderLoss = 0
    public var malformed = 0
    public var malformedByReason: [MalformedReason: Int] = [:]
    public var incompleteAtEnd = 0
    public var incompleteBytes: Int64 = 0
    /// Messages that a gap (bytes never captured) fell into.
    public var damagedByGaps = 0
    /// Bytes no message could be found in: skipped while resynchronising, or after giving up.
    public var undissectedBytes: Int64 = 0
    public var preambleBytes: Int64 = 0
    /// Resynchronisations that found frames again, and directions given up.
    public var resyncs = 0
    public var stopped = false
    /// Time from a message's first to its last segment, in microseconds.
    public var assemblyLatencyMicroseconds = QuantileHistogram()
    /// Segments longer than the MSS the receiver announced (offload super-segments).
    public var segmentsOverMSS = 0
    /// Partial, merged and malformed over time (per direction; not summed by `merge`).
    public var timeline = EventTimeline()
    /// Bodies checked as protobuf, those that did not parse (by reason), and the valid ones
    /// counted by the schema's count field; all zero when no check applied.
    public var protobufChecked = 0
    public var protobufInvalid = 0
    public var protobufInvalidByReason: [ProtobufFailure: Int] = [:]
    var countedValues = ValueCounts()

    public init() {}

    /// Messages by type value, when the dissector reads a type.
    public var types: [UInt64: Int] { typeCounts.all }

    /// Valid protobuf bodies by the value of the schema's count field.
    public var protobufCounts: [UInt64: Int] { countedValues.all }

    mutating func countType(_ value: UInt64) { typeCounts.add(value) }

    public mutating func merge(_ o: DirectionAnalysis) {
        messages += o.messages
        messageBytes += o.messageBytes
        sizes.merge(o.sizes)
        typeCounts.merge(o.typeCounts)
        protobufChecked += o.protobufChecked
        protobufInvalid += o.protobufInvalid
        protobufInvalidByReason.merge(o.protobufInvalidByReason, uniquingKeysWith: +)
        countedValues.merge(o.countedValues)
        segments += o.segments
        partialMessages += o.partialMessages
        segmentsPerMessage.merge(o.segmentsPerMessage)
        mergedSegments += o.mergedSegments
        messagesPerSegment.merge(o.messagesPerSegment)
        naiveReaderLoss += o.naiveReaderLoss
        malformed += o.malformed
        malformedByReason.merge(o.malformedByReason, uniquingKeysWith: +)
        incompleteAtEnd += o.incompleteAtEnd
        incompleteBytes += o.incompleteBytes
        damagedByGaps += o.damagedByGaps
        undissectedBytes += o.undissectedBytes
        preambleBytes += o.preambleBytes
        resyncs += o.resyncs
        assemblyLatencyMicroseconds.merge(o.assemblyLatencyMicroseconds)
        segmentsOverMSS += o.segmentsOverMSS
    }
}

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
    public var bytes: [UInt8]
    /// Bytes the event covers: skipped by a resync, missing from a damaged message, present
    /// of an incomplete one, or the length of an invalid body (whose first bytes `bytes` holds).
    public var length: Int64
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

/// Counts per value: values below 256 in an array (no hashing per message), larger ones in a
/// dictionary.
struct ValueCounts: Sendable, Equatable {
    private var small: [UInt32] = []
    private var large: [UInt64: Int] = [:]

    var all: [UInt64: Int] {
        var all = large
        for (value, n) in small.enumerated() where n > 0 { all[UInt64(value)] = Int(n) }
        return all
    }

    mutating func add(_ value: UInt64) {
        if value < 256 {
            let i = Int(value)
            if i >= small.count { small += [UInt32](repeating: 0, count: i + 1 - small.count) }
            small[i] &+= 1
        } else {
            large[value, default: 0] += 1
        }
    }

    mutating func merge(_ o: ValueCounts) {
        if o.small.count > small.count { small += [UInt32](repeating: 0, count: o.small.count - small.count) }
        for (i, n) in o.small.enumerated() { small[i] &+= n }
        large.merge(o.large, uniquingKeysWith: +)
    }
}
