/// Limits and the counters shared by all reassemblers of one flow table.
public struct ReassemblyContext: Sendable {
    public var options: ReassemblyOptions
    /// Out-of-order bytes buffered now, all directions (with a per-segment overhead).
    public internal(set) var bufferedBytes = 0
    /// The group (`ConnectionBucket`) of the connection being reassembled, and per group the
    /// out-of-order bytes held now and at most: the peak a report gives is the groups' peaks
    /// summed (at least what was held at once), the same for tables that each had some groups.
    var bucket = 0
    private var bufferedInBucket = [Int](repeating: 0, count: ConnectionBucket.count)
    private var peakInBucket = [Int](repeating: 0, count: ConnectionBucket.count)
    public var peakBufferedBytes: Int { peakInBucket.reduce(0, +) }
    /// Conflict-window bytes allocated now.
    public internal(set) var conflictWindowBytes = 0
    /// The capture files, when retransmitted copies are compared with the first ones there
    /// (`DeliveredLocations`) rather than with copies.
    public var captureFiles: CaptureFiles?
    /// Directions that ran without a conflict window because the total was reached.
    public internal(set) var directionsWithoutConflictCheck = 0
    /// Holes skipped because the global limit was reached.
    public internal(set) var globalLimitEvictions = 0
    /// Holes skipped early because a buffer limit (per direction or global) was reached.
    public internal(set) var bufferLimitGaps = 0
    /// Bytes that arrived for such holes after they were skipped.
    public internal(set) var lateBytes: Int64 = 0
    /// Connections finalized early because `maxConnections` was reached.
    public internal(set) var connectionLimitEvictions = 0
    /// Closed connections finalized before `closedTimeout` because `maxClosedConnections` was
    /// reached (a packet of theirs that comes later opens a new connection).
    public internal(set) var closedLimitFinalized = 0

    // TCP analysis over every connection (`TCPAnalysis`), by the direction whose data it concerns.
    /// Round trips from a segment to its ACK, and of handshakes, microseconds.
    public internal(set) var ackRTT = PerDirection { _ in QuantileHistogram(bits: 6) }
    public internal(set) var initialRTT = QuantileHistogram(bits: 6)
    public internal(set) var duplicateAcks = PerDirection { _ in 0 }
    public internal(set) var zeroWindows = PerDirection { _ in 0 }
    public internal(set) var windowFull = PerDirection { _ in 0 }
    /// Stream bytes the capture does not hold (gaps of every reason), per direction.
    public internal(set) var gapBytes = PerDirection { _ in Int64(0) }
    /// Segments that arrived ahead of a hole and were held until it filled (per direction).
    public internal(set) var outOfOrder = PerDirection { _ in 0 }
    /// Segments whose payload was, wholly or partly, already delivered (`DirectionStatistics`).
    public internal(set) var retransmissions = PerDirection { _ in 0 }
    /// Segments awaiting their ACK now (bounded by `options.maxUnackedSegments`).
    var unackedSegments = 0

    public init(options: ReassemblyOptions) { self.options = options }

    /// Counts connections a limit finalized (the flow table's inlinable finalize path calls it).
    @usableFromInline mutating func countFinalized(byConnectionLimit evicted: Int = 0, byClosedLimit closed: Int = 0) {
        connectionLimitEvictions += evicted
        closedLimitFinalized += closed
    }

    /// Bookkeeping cost of one buffered segment, so that many tiny segments count too.
    static let segmentOverhead = 64

    mutating func addBuffered(_ n: Int) {
        bufferedBytes += n
        bufferedInBucket[bucket] += n
        if bufferedInBucket[bucket] > peakInBucket[bucket] { peakInBucket[bucket] = bufferedInBucket[bucket] }
    }

    mutating func removeBuffered(_ n: Int) {
        bufferedBytes -= n
        bufferedInBucket[bucket] -= n
    }

    /// Another table's group peaks (it had other groups).
    mutating func absorbPeaks(_ other: ReassemblyContext) {
        for b in peakInBucket.indices { peakInBucket[b] += other.peakInBucket[b] }
    }
}
