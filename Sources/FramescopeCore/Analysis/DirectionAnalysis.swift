/// What the dissector found in one direction of a connection. Definitions in the README.
public struct DirectionAnalysis: Sendable, Equatable {
    public var messages = 0
    public var messageBytes: Int64 = 0
    public var sizes = QuantileHistogram()
    /// Type values below 256, counted in an array (no hashing per message).
    private var smallTypes: [UInt32] = []
    /// Larger type values.
    private var largeTypes: [UInt64: Int] = [:]
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

    public init() {}

    /// Messages by type value, when the dissector reads a type.
    public var types: [UInt64: Int] {
        var all = largeTypes
        for (value, n) in smallTypes.enumerated() where n > 0 { all[UInt64(value)] = Int(n) }
        return all
    }

    mutating func countType(_ value: UInt64) {
        if value < 256 {
            let i = Int(value)
            if i >= smallTypes.count { smallTypes += [UInt32](repeating: 0, count: i + 1 - smallTypes.count) }
            smallTypes[i] &+= 1
        } else {
            largeTypes[value, default: 0] += 1
        }
    }

    public mutating func merge(_ o: DirectionAnalysis) {
        messages += o.messages
        messageBytes += o.messageBytes
        sizes.merge(o.sizes)
        if o.smallTypes.count > smallTypes.count { smallTypes += [UInt32](repeating: 0, count: o.smallTypes.count - smallTypes.count) }
        for (i, n) in o.smallTypes.enumerated() { smallTypes[i] &+= n }
        largeTypes.merge(o.largeTypes, uniquingKeysWith: +)
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
    }

    public var kind: Kind
    public var reason: MalformedReason?
    public var connection: ConnectionID
    public var direction: Direction
    /// Stream offset (sequence space from the direction's first byte).
    public var offset: Int64
    /// Frame of the segment that carried the first byte at `offset`.
    public var frame: UInt64
    public var timestamp: Timestamp
    /// Up to 16 bytes at `offset` (the header that failed, or the start of the cut message).
    public var bytes: [UInt8]
    /// Bytes the event covers: skipped by a resync, missing from a damaged message, or
    /// present of an incomplete one.
    public var length: Int64
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
