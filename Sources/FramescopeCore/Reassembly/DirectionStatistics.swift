/// What happened to one direction of a connection.
public struct DirectionStatistics: Sendable, Equatable {
    /// TCP packets sent in this direction.
    public var packets = 0
    /// Packets with payload, every copy (retransmissions included).
    public var payloadPackets = 0
    /// Payload bytes on the wire, every copy.
    public var wireBytes: Int64 = 0
    /// Captured segments that contributed new bytes to the stream.
    public var segments = 0
    /// Reassembled bytes delivered (gaps excluded).
    public var bytes: Int64 = 0
    /// Segments whose payload was, wholly or partly, already delivered.
    public var retransmissions = 0
    /// Segments that arrived ahead of a hole and were buffered.
    public var outOfOrder = 0
    /// Keep-alive probes (one byte or none, just below the next expected byte).
    public var keepAlives = 0
    /// Overlapping copies whose bytes differ from the kept copy, and their bytes.
    public var conflicts = 0
    public var conflictBytes: Int64 = 0
    /// Holes skipped, and the bytes missing in them.
    public var gaps = 0
    public var gapBytes: Int64 = 0
    /// Holes skipped early because a buffer limit was reached (a subset of `gaps`).
    public var bufferLimitGaps = 0
    /// Segments, and their bytes, that arrived for a hole already skipped by a buffer limit:
    /// captured but too late to deliver.
    public var lateSegments = 0
    public var lateBytes: Int64 = 0
    public var synSeen = false
    public var finSeen = false
    public var rstSeen = false
    /// The first byte seen was not right after a SYN: the capture started mid-stream.
    public var startedMidStream = false
    /// MSS announced by the sender's SYN, 0 if none was seen.
    public var maximumSegmentSize = 0
    /// Segments longer than the MSS the receiver announced: offload super-segments (TSO/GRO
    /// on the capturing host), which distort partial/merged figures.
    public var segmentsOverMSS = 0
    /// Retransmitted copies that could not be compared because they fell outside the
    /// conflict window.
    public var uncheckedOverlapBytes: Int64 = 0

    public init() {}
}
