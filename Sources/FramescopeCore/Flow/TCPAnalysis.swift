/// What the network did to one direction's data, in tshark's terms (its TCP analysis, the
/// expert info): so the engineer sees whether the network or the receiver is at fault.
/// Counted on the direction whose data the events concern: the duplicate ACKs and zero windows
/// the *receiver* sent, the round-trip times of *this* direction's segments.
public struct TCPFigures: Sendable, Equatable {
    /// Delay from a segment to the ACK that acknowledges exactly its end (tshark's
    /// `tcp.analysis.ack_rtt`), as seen at the capture point.
    public var ackRTT = RTTSummary()
    /// ACKs the receiver repeated: same ACK, window and sequence number, no data
    /// (`tcp.analysis.duplicate_ack`). The receiver saw a hole: a segment was lost or reordered.
    public var duplicateAcks = 0
    /// Segments in which the receiver announced a window of zero (`tcp.analysis.zero_window`):
    /// its application stopped reading.
    public var zeroWindows = 0

    public init() {}

    public mutating func merge(_ other: TCPFigures) {
        ackRTT.merge(other.ackRTT)
        duplicateAcks += other.duplicateAcks
        zeroWindows += other.zeroWindows
    }
}

/// Count, sum, minimum and maximum of round-trip times in nanoseconds: 32 bytes a direction,
/// no allocation; the totals keep quantiles (`ReassemblyContext.ackRTT`).
public struct RTTSummary: Sendable, Equatable {
    public private(set) var count = 0
    public private(set) var sum: Int64 = 0
    public private(set) var minimum: Int64 = .max
    public private(set) var maximum: Int64 = 0

    public init() {}

    public mutating func add(_ nanoseconds: Int64) {
        count += 1
        sum += nanoseconds
        minimum = min(minimum, nanoseconds)
        maximum = max(maximum, nanoseconds)
    }

    public mutating func merge(_ other: RTTSummary) {
        guard other.count > 0 else { return }
        count += other.count
        sum += other.sum
        minimum = min(minimum, other.minimum)
        maximum = max(maximum, other.maximum)
    }
}

/// Follows a connection's sequence and acknowledgment numbers as tshark's
/// `tcp_analyze_sequence_number` does, for the figures above and the handshake's round trip.
/// Kept beside the reassembly, which has its own (byte-exact) view of retransmissions.
struct TCPAnalysis {
    /// A segment sent and not yet acknowledged: what an ACK's round trip is timed from.
    /// (Where it starts does not matter: tshark trims an entry an ACK reaches into, but only
    /// its end decides whether an ACK times or drops it.)
    struct Unacked {
        var next: UInt32
        var time: Int64
    }

    struct Sender {
        /// tshark's `nextseq` (0: none yet), `lastack` and `window` of the last segment.
        var next: UInt32 = 0
        var lastAck: UInt32 = 0
        var window: UInt16 = 0
        var lastWasKeepAlive = false
        var lastWasZeroWindowProbe = false
        /// Oldest first; `ordered` while every entry ends at or after the one before, so an ACK
        /// only drops a prefix.
        var unacked: [Unacked] = []
        var head = 0
        var ordered = true

        var inFlight: Int { unacked.count - head }
    }

    /// tshark keeps at most this many unacknowledged segments a direction (a capture of one
    /// direction only never sees the ACKs); framescope also bounds them all together
    /// (`ReassemblyContext.maxUnackedSegments`).
    static let maxUnackedPerDirection = 10_000

    var senders = PerDirection { _ in Sender() }
    /// The last SYN without ACK, and the handshake's round trip (tshark's `ts_mru_syn` and
    /// `tcp.analysis.initial_rtt`), nanoseconds; 0 when not seen.
    var synTime: Int64 = 0
    var initialRTT: Int64 = 0

    /// One segment sent in `direction`: each finding goes to the figures of the direction whose
    /// data it concerns.
    mutating func observe(
        _ segment: TCPSegment, from direction: Direction, at time: Timestamp, context: inout ReassemblyContext,
        clientToServer: inout TCPFigures, serverToClient: inout TCPFigures
    ) {
        func update(_ d: Direction, _ body: (inout TCPFigures) -> Void) {
            if d == .clientToServer { body(&clientToServer) } else { body(&serverToClient) }
        }
        let flags = segment.flags, seq = segment.sequence, ack = segment.acknowledgment, window = segment.window
        let length = UInt32(truncatingIfNeeded: segment.payload.count + segment.missingPayload)
        let control = flags.contains(.syn) || flags.contains(.fin) || flags.contains(.rst)
        let peer = direction.reversed
        if flags.contains(.syn) && !flags.contains(.ack) {
            synTime = time.nanoseconds
        } else if flags.contains(.ack) && !flags.contains(.syn) && synTime != 0 && initialRTT == 0 {
            initialRTT = time.nanoseconds - synTime
            if initialRTT > 0 { context.initialRTT.add(initialRTT / 1000) }
        }

        var fwd = senders[direction]
        let rev = senders[peer]
        // The checks in tshark's order; a zero-window probe, a keep-alive's ACK and a probe's
        // ACK end them.
        let zeroWindowProbe = length == 1 && seq == fwd.next && rev.window == 0
        var keepAlive = false
        checks: do {
            if zeroWindowProbe { break checks }
            if window == 0 && !control {
                update(peer) { $0.zeroWindows += 1 }
                context.zeroWindows[peer] += 1
            }
            keepAlive = length <= 1 && seq == fwd.next &- 1 && !control
            let repeatsLast = length == 0 && window == fwd.window && seq == fwd.next && ack == fwd.lastAck && !control
            if repeatsLast && window != 0 && rev.lastWasKeepAlive { break checks }
            if repeatsLast && window == 0 && rev.lastWasZeroWindowProbe { break checks }
            if repeatsLast && window != 0 {
                update(peer) { $0.duplicateAcks += 1 }
                context.duplicateAcks[peer] += 1
            }
        }

        var next = seq &+ length
        if flags.contains(.syn) || flags.contains(.fin) { next = next &+ 1 }
        if (length > 0 || flags.contains(.syn) || flags.contains(.fin)) && fwd.inFlight < Self.maxUnackedPerDirection
            && context.unackedSegments < context.options.maxUnackedSegments
        {
            if let last = fwd.unacked.last, fwd.inFlight > 0, Int32(bitPattern: next &- last.next) < 0 { fwd.ordered = false }
            fwd.unacked.append(Unacked(next: next, time: time.nanoseconds))
            context.unackedSegments += 1
        }
        if (Int32(bitPattern: next &- fwd.next) > 0 || fwd.next == 0) && !zeroWindowProbe { fwd.next = next }
        fwd.window = window
        fwd.lastAck = ack
        fwd.lastWasKeepAlive = keepAlive
        fwd.lastWasZeroWindowProbe = zeroWindowProbe
        senders[direction] = fwd

        if let acked = senders[peer].acknowledge(ack, context: &context) {
            let rtt = time.nanoseconds - acked
            update(peer) { $0.ackRTT.add(rtt) }
            context.ackRTT[peer].add(rtt / 1000)
        }
    }

    /// Gives the connection's unacknowledged segments back to the global budget.
    func release(context: inout ReassemblyContext) {
        context.unackedSegments -= senders.clientToServer.inFlight + senders.serverToClient.inFlight
    }
}

extension TCPAnalysis.Sender {
    /// Drops what `ack` acknowledges, as tshark walks its list: every entry ending at or before
    /// `ack` goes, and one ending exactly at it times the round trip (the oldest such entry, the
    /// last tshark's newest-first walk sees). Returns the time of the segment timed, if any.
    mutating func acknowledge(_ ack: UInt32, context: inout ReassemblyContext) -> Int64? {
        guard inFlight > 0 else { return nil }
        @inline(__always) func acknowledged(_ entry: TCPAnalysis.Unacked) -> Bool { Int32(bitPattern: entry.next &- ack) <= 0 }
        var timed: Int64?
        var removed = 0
        if ordered {
            while head < unacked.count && acknowledged(unacked[head]) {
                if unacked[head].next == ack && timed == nil { timed = unacked[head].time }
                head += 1
                removed += 1
            }
        } else {
            var kept: [TCPAnalysis.Unacked] = []
            for entry in unacked[head...] {
                if !acknowledged(entry) {
                    kept.append(entry)
                    continue
                }
                if entry.next == ack && timed == nil { timed = entry.time }
                removed += 1
            }
            unacked = kept
            head = 0
            ordered = zip(unacked, unacked.dropFirst()).allSatisfy { Int32(bitPattern: $1.next &- $0.next) >= 0 }
        }
        context.unackedSegments -= removed
        if head == unacked.count {
            unacked.removeAll(keepingCapacity: unacked.capacity <= 64)
            head = 0
            ordered = true
        } else if head >= 64 && head * 2 >= unacked.count {
            unacked.removeFirst(head)
            head = 0
        }
        return timed
    }
}
