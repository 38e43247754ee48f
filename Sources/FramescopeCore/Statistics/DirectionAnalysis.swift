/// What the dissector found in one direction of a connection. Definitions in the README.
///
/// What a healthy direction never counts (malformed headers, junk, recovery, incomplete and
/// damaged messages, invalid bodies) lives out of line in `Anomalies`, allocated at the first:
/// 50,000 open connections carry the pointer, not the counters.
public struct DirectionAnalysis: Sendable, Equatable {
    public var messages = 0
    public var messageBytes: Int64 = 0
    public var sizes = QuantileHistogram()
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
    /// Time from a message's first to its last segment, in microseconds.
    public var assemblyLatencyMicroseconds = QuantileHistogram()
    /// Partial, merged and malformed over time (per direction; not summed by `merge`).
    public var timeline = EventTimeline()
    /// Bodies checked as protobuf (the invalid ones are anomalies), and the valid ones by the
    /// value of the schema's count field.
    public var protobufChecked = 0
    /// Messages by type (all, partial, glued) and valid bodies by the count field's value: only
    /// with a type field or `--count-by`, so out of line (empty tallies in place were 32 bytes a
    /// direction, and 32 more in every direction's split causes).
    private var tallies = OutOfLine<Tallies>()
    private var anomalies = OutOfLine<Anomalies>()

    struct Tallies: Sendable, Equatable, Blank {
        var types = ValueCounts()
        var partialTypes = ValueCounts()
        var gluedTypes = ValueCounts()
        var protobuf = ValueCounts()

        mutating func merge(_ other: Tallies) {
            types.merge(other.types)
            partialTypes.merge(other.partialTypes)
            gluedTypes.merge(other.gluedTypes)
            protobuf.merge(other.protobuf)
        }
    }
    private var causes = OutOfLine<SplitCauses>()

    struct Anomalies: Sendable, Equatable, Blank {
        var malformed = 0
        var malformedByReason = ReasonCounts<MalformedReason>()
        var incompleteAtEnd = 0
        var incompleteBytes: Int64 = 0
        var damagedByGaps = 0
        var undissectedBytes: Int64 = 0
        var leadingBytes: Int64 = 0
        var boundaryEvidenceBits: Double?
        var boundariesNotFound = 0
        var preambleBytes: Int64 = 0
        var resyncs = 0
        var stopped = false
        var segmentsOverMSS = 0
        var recutSegments = 0
        var protobufInvalid = 0
        var protobufInvalidByReason = ReasonCounts<ProtobufFailure>()

        mutating func merge(_ o: Anomalies) {
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
            segmentsOverMSS += o.segmentsOverMSS
            recutSegments += o.recutSegments
            protobufInvalid += o.protobufInvalid
            protobufInvalidByReason.merge(o.protobufInvalidByReason)
        }
    }

    public init() {}

    /// Nothing counted: no message, segment, anomaly, tally or timeline event (a direction that
    /// carried no byte: the JSON listing writes its figures as `{}` without reading each one).
    public var isBlank: Bool {
        messages == 0 && messageBytes == 0 && segments == 0 && partialMessages == 0 && mergedSegments == 0 && naiveReaderLoss == 0
            && protobufChecked == 0 && sizes.count == 0 && assemblyLatencyMicroseconds.count == 0 && segmentsPerMessage.isEmpty
            && messagesPerSegment.isEmpty && timeline.isEmpty && !tallies.isAllocated && !anomalies.isAllocated && !causes.isAllocated
    }

    // Each anomaly: read straight from the box (zero without one); assigning zero without a box
    // allocates nothing; `+=` allocates it.

    public var malformed: Int {
        get { anomalies.stored?.value.malformed ?? 0 }
        set { if anomalies.isAllocated || newValue != 0 { anomalies.value.malformed = newValue } }
        _modify { yield &anomalies.value.malformed }
    }
    public var malformedByReason: ReasonCounts<MalformedReason> {
        get { anomalies.stored?.value.malformedByReason ?? ReasonCounts<MalformedReason>() }
        _modify { yield &anomalies.value.malformedByReason }
    }
    public var incompleteAtEnd: Int {
        get { anomalies.stored?.value.incompleteAtEnd ?? 0 }
        set { if anomalies.isAllocated || newValue != 0 { anomalies.value.incompleteAtEnd = newValue } }
        _modify { yield &anomalies.value.incompleteAtEnd }
    }
    public var incompleteBytes: Int64 {
        get { anomalies.stored?.value.incompleteBytes ?? 0 }
        set { if anomalies.isAllocated || newValue != 0 { anomalies.value.incompleteBytes = newValue } }
        _modify { yield &anomalies.value.incompleteBytes }
    }
    /// Messages that a gap (bytes never captured) fell into.
    public var damagedByGaps: Int {
        get { anomalies.stored?.value.damagedByGaps ?? 0 }
        set { if anomalies.isAllocated || newValue != 0 { anomalies.value.damagedByGaps = newValue } }
        _modify { yield &anomalies.value.damagedByGaps }
    }
    /// Bytes no message could be found in: skipped while resynchronising, or after giving up.
    public var undissectedBytes: Int64 {
        get { anomalies.stored?.value.undissectedBytes ?? 0 }
        set { if anomalies.isAllocated || newValue != 0 { anomalies.value.undissectedBytes = newValue } }
        _modify { yield &anomalies.value.undissectedBytes }
    }
    /// Bytes of a direction picked up mid-stream before its first boundary: the tail of a
    /// message sent before the capture started (neither a message nor malformed).
    public var leadingBytes: Int64 {
        get { anomalies.stored?.value.leadingBytes ?? 0 }
        set { if anomalies.isAllocated || newValue != 0 { anomalies.value.leadingBytes = newValue } }
        _modify { yield &anomalies.value.leadingBytes }
    }
    /// The weakest evidence, in bits, of the boundaries recovery found (mid-stream pickup,
    /// resynchronisation); nil when it found none.
    public var boundaryEvidenceBits: Double? {
        get { anomalies.stored?.value.boundaryEvidenceBits ?? nil }
        set { if anomalies.isAllocated || newValue != nil { anomalies.value.boundaryEvidenceBits = newValue } }
        _modify { yield &anomalies.value.boundaryEvidenceBits }
    }
    /// Searches that ended (at a gap or the end) without a boundary clearing the bar.
    public var boundariesNotFound: Int {
        get { anomalies.stored?.value.boundariesNotFound ?? 0 }
        set { if anomalies.isAllocated || newValue != 0 { anomalies.value.boundariesNotFound = newValue } }
        _modify { yield &anomalies.value.boundariesNotFound }
    }
    public var preambleBytes: Int64 {
        get { anomalies.stored?.value.preambleBytes ?? 0 }
        set { if anomalies.isAllocated || newValue != 0 { anomalies.value.preambleBytes = newValue } }
        _modify { yield &anomalies.value.preambleBytes }
    }
    /// Resynchronisations that found frames again, and directions given up.
    public var resyncs: Int {
        get { anomalies.stored?.value.resyncs ?? 0 }
        set { if anomalies.isAllocated || newValue != 0 { anomalies.value.resyncs = newValue } }
        _modify { yield &anomalies.value.resyncs }
    }
    public var stopped: Bool {
        get { anomalies.stored?.value.stopped ?? false }
        set { if anomalies.isAllocated || newValue != false { anomalies.value.stopped = newValue } }
        _modify { yield &anomalies.value.stopped }
    }
    /// Segments longer than the MSS the receiver announced (offload super-segments).
    public var segmentsOverMSS: Int {
        get { anomalies.stored?.value.segmentsOverMSS ?? 0 }
        set { if anomalies.isAllocated || newValue != 0 { anomalies.value.segmentsOverMSS = newValue } }
        _modify { yield &anomalies.value.segmentsOverMSS }
    }
    /// Segments `--mss` added by cutting longer ones in pieces (the wire's count less the capture's).
    public var recutSegments: Int {
        get { anomalies.stored?.value.recutSegments ?? 0 }
        set { if anomalies.isAllocated || newValue != 0 { anomalies.value.recutSegments = newValue } }
        _modify { yield &anomalies.value.recutSegments }
    }
    /// Bodies that did not parse as protobuf, and by reason; zero when no check applied.
    public var protobufInvalid: Int {
        get { anomalies.stored?.value.protobufInvalid ?? 0 }
        set { if anomalies.isAllocated || newValue != 0 { anomalies.value.protobufInvalid = newValue } }
        _modify { yield &anomalies.value.protobufInvalid }
    }
    public var protobufInvalidByReason: ReasonCounts<ProtobufFailure> {
        get { anomalies.stored?.value.protobufInvalidByReason ?? ReasonCounts() }
        _modify { yield &anomalies.value.protobufInvalidByReason }
    }

    /// Partial messages and merged segments by cause (`SplitCause`).
    public var partialCauses: CauseCounts {
        get { causes.stored?.value.partial ?? CauseCounts() }
        _modify { yield &causes.value.partial }
    }
    public var mergedCauses: CauseCounts {
        get { causes.stored?.value.merged ?? CauseCounts() }
        _modify { yield &causes.value.merged }
    }

    /// Messages by type value, when the dissector reads a type.
    public var types: [UInt64: Int] { tallies.stored?.value.types.all ?? [:] }

    /// Partial messages by type value.
    public var partialTypes: [UInt64: Int] { tallies.stored?.value.partialTypes.all ?? [:] }

    mutating func countPartialType(_ value: UInt64) { tallies.value.partialTypes.add(value) }

    /// Messages by type value that shared a segment with another message (a merged segment
    /// carried them): what a one-read-one-message receiver sees glued.
    public var gluedTypes: [UInt64: Int] { tallies.stored?.value.gluedTypes.all ?? [:] }

    mutating func countGluedType(_ value: UInt64) { tallies.value.gluedTypes.add(value) }

    /// Valid protobuf bodies by the value of the schema's count field.
    public var protobufCounts: [UInt64: Int] { tallies.stored?.value.protobuf.all ?? [:] }

    mutating func countType(_ value: UInt64) { tallies.value.types.add(value) }

    mutating func countProtobufValue(_ value: UInt64) { tallies.value.protobuf.add(value) }

    public mutating func merge(_ o: DirectionAnalysis) {
        mergeCounts(o)
        sizes.merge(o.sizes)
        assemblyLatencyMicroseconds.merge(o.assemblyLatencyMicroseconds)
    }

    /// `merge` without the two distributions: for the totals over finished connections, whose
    /// distributions the report takes from the analyzer's finer histograms of every message
    /// (merging each connection's coarse ones into them was work for nothing).
    mutating func mergeCounts(_ o: DirectionAnalysis) {
        messages += o.messages
        messageBytes += o.messageBytes
        protobufChecked += o.protobufChecked
        if let other = o.tallies.stored?.value { tallies.value.merge(other) }
        segments += o.segments
        partialMessages += o.partialMessages
        segmentsPerMessage.merge(o.segmentsPerMessage)
        mergedSegments += o.mergedSegments
        messagesPerSegment.merge(o.messagesPerSegment)
        naiveReaderLoss += o.naiveReaderLoss
        if o.anomalies.isAllocated { anomalies.value.merge(o.anomalies.value) }
        if let other = o.causes.stored?.value { causes.value.merge(other) }
    }
}
