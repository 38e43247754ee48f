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
    public var malformedByReason = ReasonCounts<MalformedReason>()
    public var incompleteAtEnd = 0
    public var incompleteBytes: Int64 = 0
    /// Messages that a gap (bytes never captured) fell into.
    public var damagedByGaps = 0
    /// Bytes no message could be found in: skipped while resynchronising, or after giving up.
    public var undissectedBytes: Int64 = 0
    /// Bytes of a direction picked up mid-stream before its first boundary: the tail of a
    /// message sent before the capture started (neither a message nor malformed).
    public var leadingBytes: Int64 = 0
    /// The weakest evidence, in bits, of the boundaries recovery found (mid-stream pickup,
    /// resynchronisation); nil when it found none.
    public var boundaryEvidenceBits: Double?
    /// Searches that ended (at a gap or the end) without a boundary clearing the bar.
    public var boundariesNotFound = 0
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
    public var protobufInvalidByReason = ReasonCounts<ProtobufFailure>()
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
        protobufInvalidByReason.merge(o.protobufInvalidByReason)
        countedValues.merge(o.countedValues)
        segments += o.segments
        partialMessages += o.partialMessages
        segmentsPerMessage.merge(o.segmentsPerMessage)
        mergedSegments += o.mergedSegments
        messagesPerSegment.merge(o.messagesPerSegment)
        naiveReaderLoss += o.naiveReaderLoss
        malformed += o.malformed
        malformedByReason.merge(o.malformedByReason)
        incompleteAtEnd += o.incompleteAtEnd
        incompleteBytes += o.incompleteBytes
        damagedByGaps += o.damagedByGaps
        undissectedBytes += o.undissectedBytes
        leadingBytes += o.leadingBytes
        if let bits = o.boundaryEvidenceBits { boundaryEvidenceBits = min(boundaryEvidenceBits ?? bits, bits) }
        boundariesNotFound += o.boundariesNotFound
        preambleBytes += o.preambleBytes
        resyncs += o.resyncs
        assemblyLatencyMicroseconds.merge(o.assemblyLatencyMicroseconds)
        segmentsOverMSS += o.segmentsOverMSS
    }
}
