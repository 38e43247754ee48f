/// What happened to one direction of a connection. What a clean direction never counts
/// (retransmissions, out-of-order segments, keep-alives, conflicts, gaps, late bytes, offload
/// segments) lives out of line, allocated at the first.
public struct DirectionStatistics: Sendable, Equatable {
    // The packet counts in 32 bits (a direction of 4 billion packets would be 6 TB of capture;
    // they stop there rather than wrap), the bytes in 64: 50,000 open connections hold two each.
    private var packetCount: UInt32 = 0
    private var payloadPacketCount: UInt32 = 0
    /// Payload bytes on the wire, every copy.
    public var wireBytes: Int64 = 0
    /// Reassembled bytes delivered (gaps excluded).
    public var bytes: Int64 = 0
    /// Round trips, duplicate ACKs and zero windows concerning this direction's data.
    public var tcp = TCPFigures()
    private var rare = OutOfLine<Rare>()
    private var segmentCount: UInt32 = 0
    /// The SYN's MSS as TCP carries it (16 bits), beside the flags: no padding between them.
    private var mss: UInt16 = 0
    /// The four flags below in one byte: the half-stream's own flags and its 32-bit sequence
    /// base then fit in the statistics' tail (a half-stream is 104 bytes).
    private var flags: Flags = []

    private struct Flags: OptionSet, Sendable, Equatable {
        let rawValue: UInt8
        static let syn = Flags(rawValue: 1), fin = Flags(rawValue: 2), rst = Flags(rawValue: 4), midStream = Flags(rawValue: 8)
    }

    /// TCP packets sent in this direction.
    public var packets: Int {
        get { Int(packetCount) }
        set { packetCount = UInt32(clamping: newValue) }
    }
    /// Packets with payload, every copy (retransmissions included).
    public var payloadPackets: Int {
        get { Int(payloadPacketCount) }
        set { payloadPacketCount = UInt32(clamping: newValue) }
    }
    /// Captured segments that contributed new bytes to the stream.
    public var segments: Int {
        get { Int(segmentCount) }
        set { segmentCount = UInt32(clamping: newValue) }
    }

    public var synSeen: Bool { get { flags.contains(.syn) } set { flags.set(.syn, newValue) } }
    public var finSeen: Bool { get { flags.contains(.fin) } set { flags.set(.fin, newValue) } }
    public var rstSeen: Bool { get { flags.contains(.rst) } set { flags.set(.rst, newValue) } }
    /// The first byte seen was not right after a SYN: the capture started mid-stream.
    public var startedMidStream: Bool { get { flags.contains(.midStream) } set { flags.set(.midStream, newValue) } }

    /// MSS announced by the sender's SYN, 0 if none was seen.
    public var maximumSegmentSize: Int {
        get { Int(mss) }
        set { mss = UInt16(clamping: newValue) }
    }

    struct Rare: Sendable, Equatable, Blank {
        var retransmissions = 0
        var outOfOrder = 0
        var keepAlives = 0
        var conflicts = 0
        var conflictBytes: Int64 = 0
        var gaps = 0
        var gapBytes: Int64 = 0
        var bufferLimitGaps = 0
        var lateSegments = 0
        var lateBytes: Int64 = 0
        var segmentsOverMSS = 0
        var uncheckedOverlapBytes: Int64 = 0
    }

    public init() {}

    // Each: read straight from the box (zero without one); assigning zero without a box
    // allocates nothing; `+=` allocates it.

    /// Segments whose payload was, wholly or partly, already delivered.
    public var retransmissions: Int {
        get { rare.stored?.value.retransmissions ?? 0 }
        set { if rare.isAllocated || newValue != 0 { rare.value.retransmissions = newValue } }
        _modify { yield &rare.value.retransmissions }
    }
    /// Segments that arrived ahead of a hole and were buffered.
    public var outOfOrder: Int {
        get { rare.stored?.value.outOfOrder ?? 0 }
        set { if rare.isAllocated || newValue != 0 { rare.value.outOfOrder = newValue } }
        _modify { yield &rare.value.outOfOrder }
    }
    /// Keep-alive probes (one byte or none, just below the next expected byte).
    public var keepAlives: Int {
        get { rare.stored?.value.keepAlives ?? 0 }
        set { if rare.isAllocated || newValue != 0 { rare.value.keepAlives = newValue } }
        _modify { yield &rare.value.keepAlives }
    }
    /// Overlapping copies whose bytes differ from the kept copy, and their bytes.
    public var conflicts: Int {
        get { rare.stored?.value.conflicts ?? 0 }
        set { if rare.isAllocated || newValue != 0 { rare.value.conflicts = newValue } }
        _modify { yield &rare.value.conflicts }
    }
    public var conflictBytes: Int64 {
        get { rare.stored?.value.conflictBytes ?? 0 }
        set { if rare.isAllocated || newValue != 0 { rare.value.conflictBytes = newValue } }
        _modify { yield &rare.value.conflictBytes }
    }
    /// Holes skipped, and the bytes missing in them.
    public var gaps: Int {
        get { rare.stored?.value.gaps ?? 0 }
        set { if rare.isAllocated || newValue != 0 { rare.value.gaps = newValue } }
        _modify { yield &rare.value.gaps }
    }
    public var gapBytes: Int64 {
        get { rare.stored?.value.gapBytes ?? 0 }
        set { if rare.isAllocated || newValue != 0 { rare.value.gapBytes = newValue } }
        _modify { yield &rare.value.gapBytes }
    }
    /// Holes skipped early because a buffer limit was reached (a subset of `gaps`).
    public var bufferLimitGaps: Int {
        get { rare.stored?.value.bufferLimitGaps ?? 0 }
        set { if rare.isAllocated || newValue != 0 { rare.value.bufferLimitGaps = newValue } }
        _modify { yield &rare.value.bufferLimitGaps }
    }
    /// Segments, and their bytes, that arrived for a hole already skipped by a buffer limit:
    /// captured but too late to deliver.
    public var lateSegments: Int {
        get { rare.stored?.value.lateSegments ?? 0 }
        set { if rare.isAllocated || newValue != 0 { rare.value.lateSegments = newValue } }
        _modify { yield &rare.value.lateSegments }
    }
    public var lateBytes: Int64 {
        get { rare.stored?.value.lateBytes ?? 0 }
        set { if rare.isAllocated || newValue != 0 { rare.value.lateBytes = newValue } }
        _modify { yield &rare.value.lateBytes }
    }
    /// Segments longer than the MSS the receiver announced: offload super-segments (TSO/GRO
    /// on the capturing host), which distort partial/merged figures.
    public var segmentsOverMSS: Int {
        get { rare.stored?.value.segmentsOverMSS ?? 0 }
        set { if rare.isAllocated || newValue != 0 { rare.value.segmentsOverMSS = newValue } }
        _modify { yield &rare.value.segmentsOverMSS }
    }
    /// Retransmitted copies that could not be compared because they fell outside the
    /// conflict window.
    public var uncheckedOverlapBytes: Int64 {
        get { rare.stored?.value.uncheckedOverlapBytes ?? 0 }
        set { if rare.isAllocated || newValue != 0 { rare.value.uncheckedOverlapBytes = newValue } }
        _modify { yield &rare.value.uncheckedOverlapBytes }
    }
}

extension OptionSet where Element == Self {
    /// Inserts `member` when `on`, else removes it: a flag kept in a set, set from a `Bool`.
    mutating func set(_ member: Self, _ on: Bool) {
        if on { insert(member) } else { remove(member) }
    }
}
