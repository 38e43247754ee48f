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
    public var duplicateAcks: Int {
        get { trouble.stored?.value.duplicateAcks ?? 0 }
        set { trouble.value.duplicateAcks = newValue }
    }
    /// Segments in which the receiver announced a window of zero (`tcp.analysis.zero_window`):
    /// its application stopped reading.
    public var zeroWindows: Int {
        get { trouble.stored?.value.zeroWindows ?? 0 }
        set { trouble.value.zeroWindows = newValue }
    }
    /// Segments of this direction that filled the receiver's advertised window to its edge
    /// (`tcp.analysis.window_full`; needs the window scale, so both SYNs): the receiver is the
    /// bottleneck.
    public var windowFull: Int {
        get { trouble.stored?.value.windowFull ?? 0 }
        set { trouble.value.windowFull = newValue }
    }
    /// The three counters above, which a healthy direction never touches: out of line (24 bytes
    /// fewer in each half-stream of every connection record).
    private var trouble = OutOfLine<Trouble>()

    struct Trouble: Sendable, Equatable, Blank {
        var duplicateAcks = 0, zeroWindows = 0, windowFull = 0
    }

    public init() {}

    public mutating func merge(_ other: TCPFigures) {
        ackRTT.merge(other.ackRTT)
        guard let theirs = other.trouble.stored?.value else { return }
        trouble.value.duplicateAcks += theirs.duplicateAcks
        trouble.value.zeroWindows += theirs.zeroWindows
        trouble.value.windowFull += theirs.windowFull
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

/// A window whose scale is not known (no handshake seen).
let unknownWindow = UInt32.max

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

    /// A direction's sender as tshark follows it: plain values, copied freely (the list of
    /// unacknowledged segments is apart, in `unacked`, so a copy never touches it).
    struct Sender {
        /// tshark's `nextseq` (0: none yet), `lastack` and `window` of the last segment.
        var next: UInt32 = 0
        var lastAck: UInt32 = 0
        var window: UInt16 = 0
        var lastWasKeepAlive = false
        var lastWasZeroWindowProbe = false
        /// The SYN's MSS (0: none) and window scale (-1: none), and whether a SYN was seen.
        var mss: UInt16 = 0
        var scale: Int8 = -1
        var synSeen = false
        /// The last window announced, in bytes (scaled); `unknownWindow` while the scale is
        /// unknown (a window is at most 65,535 << 14, below it).
        var windowBytes = unknownWindow
        /// The longest segment sent that was not over the MSS: a full segment without an MSS.
        var largest: UInt32 = 0
    }

    /// A direction's segments not yet acknowledged, oldest first. One segment in flight is kept
    /// in place (a handshake, a request and its response, an idle connection's last exchange:
    /// 50,000 connections allocated two lists each for that); from the second, `entries[head..<
    /// tail]`, storage reused, not emptied, so a connection that keeps a few in flight allocates
    /// once. `ordered` while every entry ends at or after the one before, so an ACK only drops
    /// a prefix.
    struct UnackedList {
        var entries: [Unacked] = []
        /// Without `entries`, the segment in place's end (when `tail` is 1).
        var head: Int32 = 0
        /// `tail`, its top bit set while the entries are out of order: a list is 24 bytes with
        /// the segment in place, not 32 (every connection record holds two; a list holds at
        /// most 10,000 entries).
        private var tailAndDisorder: UInt32 = 0
        /// The segment in place's time.
        var onlyTime: Int64 = 0

        var tail: Int32 {
            get { Int32(bitPattern: tailAndDisorder & 0x7FFF_FFFF) }
            set { tailAndDisorder = tailAndDisorder & 0x8000_0000 | UInt32(bitPattern: newValue) }
        }

        var ordered: Bool {
            get { tailAndDisorder & 0x8000_0000 == 0 }
            set { tailAndDisorder = newValue ? tailAndDisorder & 0x7FFF_FFFF : tailAndDisorder | 0x8000_0000 }
        }

        var count: Int { entries.isEmpty ? Int(tail) : Int(tail - head) }
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
    /// A pure ACK that acknowledged everything its peer had sent, and only the peer's packets
    /// since: data the peer sends now was held until that ACK (`SegmentTraits.releasedByAck`).
    /// Its time (`Int64.min`: none) and the peer's direction, stored apart so that the
    /// direction fits in the padding after `unacked` (every connection record holds these).
    var releaseTime = Int64.min
    var unacked = PerDirection { _ in UnackedList() }
    var releaseSender = Direction.clientToServer

    /// One segment sent in `direction`: each finding goes to the figures of the direction whose
    /// data it concerns. Returns how the segment was sent, for the framing statistics.
    mutating func observe(
        _ segment: TCPSegment, from direction: Direction, at time: Timestamp, context: inout ReassemblyContext,
        clientToServer: inout TCPFigures, serverToClient: inout TCPFigures
    ) -> SegmentTraits {
        let flags = segment.flags
        if flags.contains(.syn) && !flags.contains(.ack) {
            synTime = time.nanoseconds
        } else if flags.contains(.ack) && !flags.contains(.syn) && synTime != 0 && initialRTT == 0 {
            initialRTT = time.nanoseconds - synTime
            if initialRTT > 0 { context.initialRTT.add(initialRTT / 1000) }
        }
        let released = releaseTime != .min && releaseSender == direction && time.nanoseconds - releaseTime <= 1_000_000 + initialRTT
        // In place, through each side's stored properties (no copy of a sender, no accessor).
        let (traits, acksAllInFlight) =
            switch direction {
            case .clientToServer:
                Self.observe(
                    segment, at: time.nanoseconds, released: released, sender: &senders.clientToServer, receiver: &senders.serverToClient,
                    sent: &unacked.clientToServer, acked: &unacked.serverToClient, figures: &clientToServer, receiverFigures: &serverToClient,
                    from: direction, context: &context)
            case .serverToClient:
                Self.observe(
                    segment, at: time.nanoseconds, released: released, sender: &senders.serverToClient, receiver: &senders.clientToServer,
                    sent: &unacked.serverToClient, acked: &unacked.clientToServer, figures: &serverToClient, receiverFigures: &clientToServer,
                    from: direction, context: &context)
            }
        if acksAllInFlight {
            (releaseSender, releaseTime) = (direction.reversed, time.nanoseconds)
        } else if releaseSender != direction {
            releaseTime = .min
        }
        return traits
    }

    /// `observe` for a segment of `sender` (whose figures are `figures`) to `receiver`: the
    /// segment's traits, and whether it is a pure ACK of everything the receiver had in flight.
    private static func observe(
        _ segment: TCPSegment, at time: Int64, released: Bool, sender fwd: inout Sender, receiver rev: inout Sender,
        sent: inout UnackedList, acked: inout UnackedList, figures: inout TCPFigures, receiverFigures: inout TCPFigures,
        from direction: Direction, context: inout ReassemblyContext
    ) -> (SegmentTraits, acksAllInFlight: Bool) {
        let flags = segment.flags, seq = segment.sequence, ack = segment.acknowledgment, window = segment.window
        let length = UInt32(truncatingIfNeeded: segment.payload.count + segment.missingPayload)
        let control = flags.contains(.syn) || flags.contains(.fin) || flags.contains(.rst)
        let peer = direction.reversed
        let traits = length > 0 ? Self.traits(seq: seq, length: length, sender: fwd, receiver: rev, released: released) : []
        if !control && length > 0 && !traits.contains(.overMSS) { fwd.largest = max(fwd.largest, length) }
        if flags.contains(.syn) {
            fwd.synSeen = true
            if segment.maximumSegmentSize > 0 { fwd.mss = segment.maximumSegmentSize }
            fwd.scale = segment.windowScale
        }
        let acksAllInFlight = length == 0 && !control && flags.contains(.ack) && fwd.lastAck != 0
            && Int32(bitPattern: ack &- fwd.lastAck) > 0 && ack == rev.next
        // The checks in tshark's order; a zero-window probe, a keep-alive's ACK and a probe's
        // ACK end them.
        let zeroWindowProbe = length == 1 && seq == fwd.next && rev.window == 0
        var keepAlive = false
        checks: do {
            if zeroWindowProbe { break checks }
            if traits.contains(.windowLimited) && !control {
                figures.windowFull += 1
                context.windowFull[direction] += 1
            }
            if window == 0 && !control {
                receiverFigures.zeroWindows += 1
                context.zeroWindows[peer] += 1
            }
            keepAlive = length <= 1 && seq == fwd.next &- 1 && !control
            let repeatsLast = length == 0 && window == fwd.window && seq == fwd.next && ack == fwd.lastAck && !control
            if repeatsLast && window != 0 && rev.lastWasKeepAlive { break checks }
            if repeatsLast && window == 0 && rev.lastWasZeroWindowProbe { break checks }
            if repeatsLast && window != 0 {
                receiverFigures.duplicateAcks += 1
                context.duplicateAcks[peer] += 1
            }
        }

        var next = seq &+ length
        if flags.contains(.syn) || flags.contains(.fin) { next = next &+ 1 }
        if (length > 0 || flags.contains(.syn) || flags.contains(.fin)) && sent.count < maxUnackedPerDirection
            && context.unackedSegments < context.options.maxUnackedSegments
        {
            sent.append(Unacked(next: next, time: time))
            context.unackedSegments += 1
        }
        if (Int32(bitPattern: next &- fwd.next) > 0 || fwd.next == 0) && !zeroWindowProbe { fwd.next = next }
        fwd.window = window
        fwd.windowBytes = windowBytes(window, syn: flags.contains(.syn), of: fwd, peer: rev)
        fwd.lastAck = ack
        fwd.lastWasKeepAlive = keepAlive
        fwd.lastWasZeroWindowProbe = zeroWindowProbe

        if acked.count > 0, let timed = acked.acknowledge(ack, context: &context) {
            let rtt = time - timed
            receiverFigures.ackRTT.add(rtt)
            context.ackRTT[peer].add(rtt / 1000)
        }
        return (traits, acksAllInFlight)
    }

    /// How a segment of `length` bytes at `seq` was sent, judged from what came before it.
    private static func traits(seq: UInt32, length: UInt32, sender: Sender, receiver: Sender, released: Bool) -> SegmentTraits {
        var traits: SegmentTraits = []
        // Options take up to 40 bytes of a full segment (12 with Linux's timestamps).
        let mss = UInt32(receiver.mss)
        if mss > 0 {
            if length > mss { traits.insert(.overMSS) }
            if length + 40 >= mss { traits.insert(.fullSized) }
        } else if length >= 536 && length + 40 >= sender.largest {
            traits.insert(.fullSized)  // no handshake seen: as long as the longest so far
        }
        if receiver.windowBytes != unknownWindow, receiver.lastAck &+ receiver.windowBytes == seq &+ length {
            traits.insert(.windowLimited)
        }
        // Sent in order soon after the receiver's ACK of everything in flight, with nothing from
        // the receiver between (`released`: within a millisecond and the capture point's
        // distance from the sender, a round trip at most).
        if released && seq == sender.next { traits.insert(.releasedByAck) }
        return traits
    }

    /// A window field in bytes: scaled by the shift its sender announced when both SYNs carried
    /// the option (never in a SYN), unscaled when both SYNs came without; `unknownWindow`
    /// without the SYNs.
    private static func windowBytes(_ window: UInt16, syn: Bool, of sender: Sender, peer: Sender) -> UInt32 {
        if syn { return UInt32(window) }
        guard sender.synSeen && peer.synSeen else { return unknownWindow }
        let shift = sender.scale >= 0 && peer.scale >= 0 ? UInt32(sender.scale) : 0
        return UInt32(window) << shift
    }

    /// Gives the connection's unacknowledged segments back to the global budget.
    func release(context: inout ReassemblyContext) {
        context.unackedSegments -= unacked.clientToServer.count + unacked.serverToClient.count
    }
}

extension TCPAnalysis.UnackedList {
    /// `head` and `tail` as indices (stored as 32 bits: 50,000 connections carry two lists).
    private var h: Int {
        get { Int(head) }
        set { head = Int32(newValue) }
    }
    private var t: Int {
        get { Int(tail) }
        set { tail = Int32(newValue) }
    }

    mutating func append(_ entry: TCPAnalysis.Unacked) {
        if entries.isEmpty {
            if t == 0 {
                head = Int32(bitPattern: entry.next)
                onlyTime = entry.time
                t = 1
                return
            }
            // A second segment in flight: both go to storage.
            let first = TCPAnalysis.Unacked(next: UInt32(bitPattern: head), time: onlyTime)
            entries.reserveCapacity(4)
            entries.append(first)
            h = 0
        }
        if t > h && Int32(bitPattern: entry.next &- entries[t - 1].next) < 0 { ordered = false }
        if t == entries.count {
            if h >= 64 && h * 2 >= t { compact() }
            if t == entries.count {
                entries.append(entry)
                t += 1
                return
            }
        }
        entries[t] = entry
        t += 1
    }

    /// Moves the live entries to the front.
    private mutating func compact() {
        for i in h..<t { entries[i - h] = entries[i] }
        t -= h
        h = 0
    }

    /// Drops what `ack` acknowledges, as tshark walks its list: every entry ending at or before
    /// `ack` goes, and one ending exactly at it times the round trip (the oldest such entry, the
    /// last tshark's newest-first walk sees). Returns the time of the segment timed, if any.
    mutating func acknowledge(_ ack: UInt32, context: inout ReassemblyContext) -> Int64? {
        guard count > 0 else { return nil }
        @inline(__always) func acknowledged(_ entry: TCPAnalysis.Unacked) -> Bool { Int32(bitPattern: entry.next &- ack) <= 0 }
        if entries.isEmpty {  // the segment in place
            let only = TCPAnalysis.Unacked(next: UInt32(bitPattern: head), time: onlyTime)
            guard acknowledged(only) else { return nil }
            head = 0
            t = 0
            context.unackedSegments -= 1
            return only.next == ack ? only.time : nil
        }
        var timed: Int64?
        let before = count
        if ordered {
            while h < t && acknowledged(entries[h]) {
                if entries[h].next == ack && timed == nil { timed = entries[h].time }
                h += 1
            }
        } else {
            var kept = h
            for i in h..<t {
                let entry = entries[i]
                if !acknowledged(entry) {
                    entries[kept] = entry
                    kept += 1
                    continue
                }
                if entry.next == ack && timed == nil { timed = entry.time }
            }
            t = kept
            ordered = true
            if t - h > 1 {
                for i in (h + 1)..<t where Int32(bitPattern: entries[i].next &- entries[i - 1].next) < 0 { ordered = false }
            }
        }
        context.unackedSegments -= before - count
        if h == t {
            h = 0
            t = 0
            ordered = true
            if entries.count > 1024 { entries = [] }  // after a burst: give the memory back
        }
        return timed
    }
}
