/// Reassembles one direction of a TCP connection (gopacket's half-connection, Zeek's
/// TCP_Reassembler).
///
/// Offsets are 64-bit positions in sequence space counted from the direction's first byte,
/// so sequence-number wraparound never shows past `offset(of:)`. A segment that arrives in
/// order is handed to the sink straight from the packet; only out-of-order data is copied.
/// Overlaps keep the bytes delivered first (tshark's "follow TCP stream").
struct HalfStream {
    struct Buffered {
        var offset: Int64
        var bytes: [UInt8]
        var frame: UInt64
        var timestamp: Timestamp
        /// Bytes right after `bytes` that the snaplen cut off.
        var missingTail: Int
        var traits: SegmentTraits
        /// Where `bytes` lie in the capture file.
        var location: CaptureLocation

        var end: Int64 { offset + Int64(bytes.count) }
        /// One past the last byte covered, captured or cut off.
        var reach: Int64 { end + Int64(missingTail) }
        var cost: Int { bytes.count + ReassemblyContext.segmentOverhead }
    }

    // Fields ordered widest first, the small ones packed at the end: 50,000 open connections
    // hold two each, so every padding byte counts 100,000 times (`FootprintTests`).
    var statistics = DirectionStatistics()
    // Two flags in one byte and the sequence base in the statistics' tail padding (declared
    // after them, not at the end, where they took a word of their own).
    private var flags: Flags = []
    /// Sequence number of stream offset 0.
    private var base: UInt32 = 0
    /// Stream offset of the next byte to deliver: the bytes delivered and the gaps skipped so
    /// far (kept once, in the statistics: 50,000 open connections hold two half-streams each).
    var frontier: Int64 { statistics.bytes + statistics.gapBytes }
    private var reordering = OutOfLine<Reordering>()
    var window: RecentBytes?

    private struct Flags: OptionSet {
        let rawValue: UInt8
        static let started = Flags(rawValue: 1), windowDenied = Flags(rawValue: 2)
    }
    /// The direction's first byte (or SYN) fixed `base`.
    private var started: Bool { get { flags.contains(.started) } set { flags.set(.started, newValue) } }
    /// The conflict windows' total was reached when this direction wanted one.
    var windowDenied: Bool { get { flags.contains(.windowDenied) } set { flags.set(.windowDenied, newValue) } }

    /// What only a direction that buffers a segment or skips a hole needs, allocated at the
    /// first: most directions arrive in order, and 50,000 open connections held these four
    /// fields in each of their two half-streams (24 bytes more each).
    struct Reordering: Blank {
        /// Out-of-order segments sorted by offset, not overlapping each other; live from `head` on.
        var pending: [Buffered] = []
        var head = 0
        var bufferedCost = 0
        /// The last holes skipped, to recognise bytes that arrive after their hole was given up.
        var skippedHoles: [(start: Int64, end: Int64)] = []
    }

    // Each: read straight from the box (empty without one); written through it, which
    // allocates it.
    var pending: [Buffered] {
        get { reordering.stored?.value.pending ?? [] }
        _modify { yield &reordering.value.pending }
    }
    var head: Int {
        get { reordering.stored?.value.head ?? 0 }
        set { reordering.value.head = newValue }
    }
    var bufferedCost: Int {
        get { reordering.stored?.value.bufferedCost ?? 0 }
        set { reordering.value.bufferedCost = newValue }
    }
    var skippedHoles: [(start: Int64, end: Int64)] {
        get { reordering.stored?.value.skippedHoles ?? [] }
        _modify { yield &reordering.value.skippedHoles }
    }

    /// Whether this direction ever buffered a segment or skipped a hole (its box exists).
    var holdsReordering: Bool { reordering.isAllocated }

    var hasPending: Bool {
        guard let stored = reordering.stored else { return false }
        return stored.value.head < stored.value.pending.count
    }

    /// Everything a reassembler needs to emit an event.
    struct Route {
        var connection: ConnectionID
        var direction: Direction
    }

    // MARK: Receiving segments

    mutating func receive<Sink: StreamSink>(
        _ segment: TCPSegment, frame: UInt64, timestamp: Timestamp, traits: SegmentTraits, route: Route,
        context: inout ReassemblyContext, sink: inout Sink, state: inout Sink.ConnectionState
    ) {
        statistics.packets += 1
        let flags = segment.flags
        var sequence = segment.sequence
        if flags.contains(.syn) {
            statistics.synSeen = true
            if segment.maximumSegmentSize > 0 { statistics.maximumSegmentSize = Int(segment.maximumSegmentSize) }
            // A SYN fixes the base unless data already flowed: a stray ACK seen before it
            // (e.g. before a retransmitted SYN) must not decide where the stream starts.
            if !started || (frontier == 0 && !hasPending && statistics.payloadPackets == 0) {
                base = sequence &+ 1
                started = true
                statistics.startedMidStream = false
                statistics.rstSeen = false  // an earlier attempt's RST does not close this one
                statistics.finSeen = false
            }
            sequence = sequence &+ 1  // the SYN takes one sequence number; data follows it
        }
        if flags.contains(.rst) { statistics.rstSeen = true }
        if !started {
            // No SYN seen: pick up at the first byte this direction sends. A segment without
            // data does not fix where: a keepalive or a zero-window probe carries the sequence
            // number before the next byte.
            if segment.payload.isEmpty && segment.missingPayload == 0 && !flags.contains(.fin) {
                if !flags.contains(.rst) { statistics.startedMidStream = true }
                return
            }
            base = sequence
            started = true
            statistics.startedMidStream = true
        }
        let length = segment.payload.count + segment.missingPayload
        if length > 0 {
            statistics.payloadPackets += 1
            statistics.wireBytes += Int64(length)
            if traits.contains(.overMSS) { statistics.segmentsOverMSS += 1 }
            receivePayload(
                segment.payload, location: segment.payloadLocation, missingTail: segment.missingPayload, at: offset(of: sequence),
                frame: frame, timestamp: timestamp, flags: flags, traits: traits, route: route, context: &context, sink: &sink, state: &state)
        }
        if flags.contains(.fin) {
            statistics.finSeen = true
        }
    }

    /// Stream offset of a sequence number, taken as the nearest one to the frontier.
    private func offset(of sequence: UInt32) -> Int64 {
        let next = base &+ UInt32(truncatingIfNeeded: frontier)
        return frontier + Int64(Int32(bitPattern: sequence &- next))
    }

    private mutating func receivePayload<Sink: StreamSink>(
        _ payload: UnsafeRawBufferPointer, location: CaptureLocation, missingTail: Int, at start: Int64, frame: UInt64,
        timestamp: Timestamp, flags: TCPFlags, traits: SegmentTraits, route: Route, context: inout ReassemblyContext, sink: inout Sink,
        state: inout Sink.ConnectionState
    ) {
        var traits = traits
        let end = start + Int64(payload.count + missingTail)
        if end <= frontier {
            if payload.count <= 1 && end == frontier && !flags.contains(.syn) && !flags.contains(.fin) {
                statistics.keepAlives += 1  // probe byte below the window: neither data nor a conflict
                return
            }
            if countLate(from: start, to: end, context: &context) { return }
            countRetransmission(route, context: &context)
            checkOverlap(payload, at: start, frame: frame, route: route, context: &context, sink: &sink, state: &state)
            return
        }
        if start > frontier {
            let added = buffer(
                payload, location: location, missingTail: missingTail, at: start, frame: frame, timestamp: timestamp, traits: traits, route: route, sink: &sink, state: &state,
                context: &context)
            if added {
                statistics.outOfOrder += 1
                context.outOfOrder[route.direction] += 1
            } else {
                countRetransmission(route, context: &context)
            }
            enforceLimits(route: route, context: &context, sink: &sink, state: &state)
            return
        }
        var fresh = payload
        if start < frontier {
            traits.insert(.retransmitted)
            countRetransmission(route, context: &context)
            let overlap = Int(frontier - start)
            checkOverlap(payload.slice(from: 0, count: overlap), at: start, frame: frame, route: route, context: &context, sink: &sink, state: &state)
            fresh = payload.dropFirst(overlap)
        }
        let tail = Int(end - frontier) - fresh.count
        deliver(fresh, location: location.advanced(by: payload.count - fresh.count), missingTail: tail, frame: frame, timestamp: timestamp, traits: traits, route: route, context: &context, sink: &sink, state: &state)
        drain(route: route, context: &context, sink: &sink, state: &state)
    }

    /// A segment that carried bytes already sent: in this direction's figures and the totals.
    private mutating func countRetransmission(_ route: Route, context: inout ReassemblyContext) {
        statistics.retransmissions += 1
        context.retransmissions[route.direction] += 1
    }

    // MARK: Delivery

    /// Hands in-order bytes at `frontier` (from `location` in the capture) to the sink and
    /// moves the frontier past them.
    private mutating func deliver<Sink: StreamSink>(
        _ bytes: UnsafeRawBufferPointer, location: CaptureLocation, missingTail: Int, frame: UInt64, timestamp: Timestamp, traits: SegmentTraits,
        route: Route, context: inout ReassemblyContext, sink: inout Sink, state: inout Sink.ConnectionState
    ) {
        if !bytes.isEmpty {
            compareWithPending(bytes, at: frontier, frame: frame, route: route, sink: &sink, state: &state)
            statistics.segments += 1
            sink.data(
                StreamChunk(
                    connection: route.connection, direction: route.direction, offset: frontier,
                    capturedOffset: statistics.bytes, bytes: bytes, frame: frame, timestamp: timestamp, midStream: statistics.startedMidStream,
                    traits: traits),
                state: &state)
            rememberForConflicts(bytes, location: location, context: &context)
            statistics.bytes += Int64(bytes.count)  // (moves the frontier past them)
        }
        if missingTail > 0 {
            skip(Int64(missingTail), reason: .truncatedPayload, route: route, context: &context, sink: &sink, state: &state)
        }
    }

    /// Delivers buffered segments that the frontier has reached.
    mutating func drain<Sink: StreamSink>(route: Route, context: inout ReassemblyContext, sink: inout Sink, state: inout Sink.ConnectionState) {
        guard hasPending else { return }  // (in order: no box to look into)
        while head < pending.count && pending[head].offset <= frontier {
            let segment = pending[head]
            pending[head].bytes = []
            head += 1
            bufferedCost -= segment.cost
            context.removeBuffered(segment.cost)
            let overlap = Int(min(frontier - segment.offset, Int64(segment.bytes.count)))
            let reachesPast = segment.end + Int64(segment.missingTail) > frontier
            guard reachesPast else { continue }
            segment.bytes.withUnsafeBytes { bytes in
                deliver(
                    bytes.dropFirst(overlap), location: segment.location.advanced(by: overlap),
                    missingTail: segment.missingTail - max(0, Int(frontier - segment.end)),
                    frame: segment.frame, timestamp: segment.timestamp, traits: segment.traits, route: route, context: &context, sink: &sink,
                    state: &state)
            }
        }
        compactPending()
    }

    /// Bytes of a segment that fall in a hole already skipped: they arrived too late to be
    /// delivered (a buffer limit gave the hole up). Returns true when the whole segment was late.
    private mutating func countLate(from start: Int64, to end: Int64, context: inout ReassemblyContext) -> Bool {
        var late: Int64 = 0
        for hole in skippedHoles where hole.start < end && start < hole.end {
            late += min(end, hole.end) - max(start, hole.start)
        }
        guard late > 0 else { return false }
        statistics.lateSegments += 1
        statistics.lateBytes += late
        context.lateBytes += late
        return late == end - start
    }

    /// Skips `length` missing bytes at the frontier and reports them as a gap.
    mutating func skip<Sink: StreamSink>(
        _ length: Int64, reason: GapReason, route: Route, context: inout ReassemblyContext, sink: inout Sink, state: inout Sink.ConnectionState
    ) {
        guard length > 0 else { return }
        let offset = frontier
        context.gapBytes[route.direction] += length
        if reason == .bufferLimit {
            if skippedHoles.count == 8 { skippedHoles.removeFirst() }
            skippedHoles.append((offset, offset + length))
        }
        statistics.gaps += 1
        statistics.gapBytes += length  // (moves the frontier past the gap)
        if reason == .bufferLimit { statistics.bufferLimitGaps += 1 }
        sink.gap(
            StreamGap(
                connection: route.connection, direction: route.direction, offset: offset,
                capturedOffset: statistics.bytes, length: length, reason: reason), state: &state)
    }

    /// Skips the first hole (there must be pending data) and delivers what follows it.
    mutating func skipFirstHole<Sink: StreamSink>(
        reason: GapReason, route: Route, context: inout ReassemblyContext, sink: inout Sink, state: inout Sink.ConnectionState
    ) {
        guard hasPending else { return }
        if reason == .bufferLimit && pending[head].offset > frontier { context.bufferLimitGaps += 1 }
        skip(pending[head].offset - frontier, reason: reason, route: route, context: &context, sink: &sink, state: &state)
        drain(route: route, context: &context, sink: &sink, state: &state)
    }

    /// At the end of the connection: every hole left is a gap in the capture.
    mutating func flush<Sink: StreamSink>(route: Route, context: inout ReassemblyContext, sink: inout Sink, state: inout Sink.ConnectionState) {
        while hasPending {
            skipFirstHole(reason: .notCaptured, route: route, context: &context, sink: &sink, state: &state)
        }
        if window != nil {
            context.conflictWindowBytes -= context.options.conflictWindow
            window = nil
        }
    }
}
