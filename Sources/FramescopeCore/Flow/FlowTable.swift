/// When a flow table looks for idle and closed connections to finalize: at the first packet
/// at or past the due time, then a quarter of the shorter timeout (at least a second) later.
/// Apart from the table so that a reader that shares a capture's connections among tables
/// (`--threads`) can have them all sweep after the packets one table would sweep after.
public struct SweepSchedule: Sendable {
    private var clock = Timestamp(nanoseconds: .min)
    private var next = Timestamp(nanoseconds: .min)
    private let interval: Int64

    public init(options: ReassemblyOptions) {
        interval = max(1_000_000_000, min(options.idleTimeout, options.closedTimeout) / 4)
    }

    /// Moves the clock to a packet's time (it never goes back); true when a sweep is due.
    public mutating func advance(to timestamp: Timestamp) -> Bool {
        guard timestamp > clock else { return false }
        clock = timestamp
        guard clock >= next else { return false }
        next = Timestamp(nanoseconds: clock.nanoseconds &+ interval)
        return true
    }
}

/// Decodes packets, tracks connections and reassembles both directions of each, handing the
/// streams to `Sink`. Generic over the sink so that the per-packet path has no dynamic calls.
///
/// Live connections are packed in one array, each a single record (both half-streams and the
/// sink's state for it) mutated in place and found through the 4-tuple index. A finalized
/// connection is swapped out with the last one, so the array holds no vacant slots.
///
/// The paths that finalize connections are `@inlinable`: cross-module optimization specialized
/// the per-packet path for the command's sink but left these generic (witness tables and runtime
/// metadata lookups: 4,800 instructions a finished connection more).
public struct FlowTable<Sink: StreamSink> {
    public var sink: Sink
    /// The limits and counters all reassemblers share (stored as `reassembly`, which the
    /// inlinable paths may mutate).
    public var context: ReassemblyContext { reassembly }
    @usableFromInline var reassembly: ReassemblyContext
    public private(set) var decodeStatistics = DecodeStatistics()
    /// Connections opened so far (the next ID).
    public private(set) var connectionsOpened = 0
    public var activeConnections: Int { connections.count }

    @usableFromInline var connections = RecordStore<Connection<Sink.ConnectionState>>()
    /// Each connection's last activity, in the slot of its record.
    @usableFromInline var activity: [ConnectionActivity] = []
    @usableFromInline var index = FlowIndex()
    /// Connections in `connections`, and those of them closed (waiting out `closedTimeout`), per
    /// group (`ConnectionBucket`): the connection limits hold per group.
    @usableFromInline var closedInBucket = [Int](repeating: 0, count: ConnectionBucket.count)
    /// Each group's slots (a limit's victims are sought among its group's connections only; a
    /// connection knows its place here: `ConnectionActivity.placeInBucket`).
    @usableFromInline var slotsInBucket = [[Int32]](repeating: [], count: ConnectionBucket.count)
    /// Where a limit's candidates are sorted out (`leastRecentlyActive`), kept between passes.
    @usableFromInline var limitCandidates: [(lastSeen: Timestamp, slot: Int)] = []
    private var schedule: SweepSchedule
    /// Whether packets move the clock that finalizes idle and closed connections (else the
    /// table sweeps when told: `sweep(at:)`, a table with a share of the connections).
    public var sweepsOnItsOwn = true
    /// With `recordsFirstFrames`, the first frame of each connection opened, by ID (a table
    /// with a share of a capture's connections: where its IDs fall among all of them).
    public var recordsFirstFrames = false
    public private(set) var firstFrames = FrameSequence()

    /// `firstFrames`, handed over and no longer held.
    public mutating func takeFirstFrames() -> FrameSequence {
        var taken = FrameSequence()
        swap(&taken, &firstFrames)
        return taken
    }

    /// `captureFiles`: where the packets' bytes can be read back (retransmitted copies are then
    /// compared with the first ones there, not with copies).
    public init(sink: Sink, options: ReassemblyOptions = ReassemblyOptions(), captureFiles: CaptureFiles? = nil) {
        self.sink = sink
        reassembly = ReassemblyContext(options: options)
        reassembly.captureFiles = captureFiles
        schedule = SweepSchedule(options: options)
    }

    // MARK: Input

    /// Decodes one captured packet and feeds it to its connection. (Never inlined: `scripts/bench`
    /// counts the instructions of a packet's whole path inside it.)
    @inline(never)
    public mutating func process(_ bytes: UnsafeRawBufferPointer, info: CaptureInfo) {
        process(PacketDecoder.decode(bytes, info: info), info: info)
    }

    /// Feeds one packet decoded already (by a reading thread: `readDecodedConcurrently`).
    @inline(__always)
    public mutating func process(_ decoded: DecodedPacket, info: CaptureInfo) {
        decodeStatistics.packets += 1
        switch decoded {
        case .tcp(let segment):
            decodeStatistics.tcpSegments += 1
            if segment.missingPayload > 0 {
                decodeStatistics.cutSegments += 1
                decodeStatistics.cutBytes += Int64(segment.missingPayload)
            }
            receive(segment, frame: info.frame, timestamp: info.timestamp)
        case .skipped(let reason):
            decodeStatistics.count(reason)
        }
        if sweepsOnItsOwn && schedule.advance(to: info.timestamp) { sweep(at: info.timestamp) }
    }

    /// Feeds one decoded segment (tests and synthetic sources call this directly).
    public mutating func receive(_ segment: TCPSegment, frame: UInt64, timestamp: Timestamp) {
        let slot: Int
        let existing = find(segment)
        if let existing, !startsNewConnection(segment, slot: existing) {
            slot = existing
        } else {
            if let existing { finalize(slot: existing, reason: .reused) }
            slot = open(segment, key: FlowKey(segment.source, segment.destination), frame: frame, timestamp: timestamp)
        }
        // Only a FIN or an RST can close a connection, and a SYN reopen it (a new attempt clears
        // an earlier one's FIN and RST): the check costs nothing on other packets.
        let flags = segment.flags
        let mayClose = flags.contains(.fin) || flags.contains(.rst)
        connections[slot].receive(segment, frame: frame, timestamp: timestamp, context: &reassembly, sink: &sink)
        activity[slot].lastSeen = timestamp
        if mayClose || flags.contains(.syn) {
            let (was, now) = (activity[slot].isClosed, connections[slot].isClosed)
            activity[slot].isClosed = now
            if was != now {
                let bucket = Int(activity[slot].bucket)
                closedInBucket[bucket] += now ? 1 : -1
                if closedInBucket[bucket] > ConnectionBucket.share(of: reassembly.options.maxClosedConnections) {
                    finalizeLeastRecentlyClosed(bucket: bucket)
                }
            }
        }
        if reassembly.bufferedBytes > reassembly.options.maxBufferedBytesTotal { evictBufferedData() }
    }

    /// Calls `body` with each open connection (summarized as if the input ended now) and the
    /// sink's state for it, in no set order: what a live view shows.
    public func forEachOpenConnection(_ body: (ConnectionSummary, Sink.ConnectionState) throws -> Void) rethrows {
        for slot in connections.indices {
            try body(connections[slot].summary(finalizedBy: .endOfInput, lastSeen: activity[slot].lastSeen), connections[slot].state)
        }
    }

    /// Finalizes every connection still open, in ID order, where it lies (none is taken out of
    /// the array one by one: at the end of a 50,000-connection capture that moved every record).
    @inlinable public mutating func finish() {
        var order: [DueConnection] = []
        order.reserveCapacity(connections.count)
        for slot in connections.indices { order.append(DueConnection(id: connections[slot].info.id, slot: slot, reason: .endOfInput)) }
        order.sort()
        for due in order {
            connections[due.slot].finalize(reason: .endOfInput, lastSeen: activity[due.slot].lastSeen, context: &reassembly, sink: &sink)
        }
        connections.removeAll()
        activity.removeAll()
        index = FlowIndex()
        for b in 0..<ConnectionBucket.count {
            closedInBucket[b] = 0
            slotsInBucket[b].removeAll(keepingCapacity: true)
        }
    }

    // MARK: Connections

    /// The slot of `segment`'s connection, found by the hash it carries. Mutating: as a plain
    /// method it had the whole table (1.5 KB with the sink) copied per packet to read
    /// `connections` in the closure.
    private mutating func find(_ segment: TCPSegment) -> Int? {
        index.find(hash: segment.connectionHash) { connections[$0].has(segment.source, segment.destination) }
    }

    /// A SYN (without ACK) on a known 4-tuple starts a new connection unless it repeats the
    /// SYN that opened the current one (tshark's rule for reused ports).
    private mutating func startsNewConnection(_ segment: TCPSegment, slot: Int) -> Bool {
        guard segment.flags.contains(.syn), !segment.flags.contains(.ack) else { return false }
        guard connections[slot].info.client == segment.source, let isn = connections[slot].clientSequence else { return true }
        return isn != segment.sequence
    }

    private mutating func open(_ segment: TCPSegment, key: FlowKey, frame: UInt64, timestamp: Timestamp) -> Int {
        let bucket = ConnectionBucket.of(key.mixedHash)
        if slotsInBucket[bucket].count >= ConnectionBucket.share(of: reassembly.options.maxConnections) { evictLeastRecentlyActive(bucket: bucket) }
        let (client, server, evidence) = roles(of: segment)
        let info = ConnectionInfo(
            id: ConnectionID(connectionsOpened), client: client, server: server, roleEvidence: evidence,
            firstFrame: frame, firstSeen: timestamp)
        connectionsOpened += 1
        if recordsFirstFrames { firstFrames.append(frame) }
        var connection = Connection(info: info, state: sink.connectionOpened(info))
        connection.bucket = UInt8(bucket)
        if segment.flags.contains(.syn) && !segment.flags.contains(.ack) { connection.clientSequence = segment.sequence }
        // (Moved in: passed as it was, the record was copied, a retain of every box it holds,
        // and the original released at the end of `open`: 430 instructions a connection.)
        connections.append(consume connection)
        activity.append(ConnectionActivity(lastSeen: timestamp, bucket: bucket, placeInBucket: slotsInBucket[bucket].count))
        slotsInBucket[bucket].append(Int32(connections.count - 1))
        index.insert(key, slot: connections.count - 1)
        return connections.count - 1
    }

    private func roles(of segment: TCPSegment) -> (client: Endpoint, server: Endpoint, RoleEvidence) {
        let (source, destination) = (segment.source, segment.destination)
        if segment.flags.contains(.syn) {
            return segment.flags.contains(.ack)
                ? (destination, source, .synAck) : (source, destination, .syn)
        }
        if source.port < destination.port { return (destination, source, .portHeuristic) }
        return (source, destination, .portHeuristic)
    }

    /// Takes the connection out (the last one moves into its slot) and finalizes it.
    @inlinable mutating func finalize(slot: Int, reason: FinalizeReason) {
        var (connection, activity) = remove(slot: slot)  // (one binding: a `let` and a `var` of it copied the record)
        connection.finalize(reason: reason, lastSeen: activity.lastSeen, context: &reassembly, sink: &sink)
    }

    /// Takes the connection out of the table and the index; the last one moves into its slot.
    @usableFromInline mutating func remove(slot: Int) -> (Connection<Sink.ConnectionState>, ConnectionActivity) {
        uncount(slot)
        index.remove(connections[slot].key, slot: slot)
        let last = connections.count - 1
        if slot != last {
            connections.swapAt(slot, last)
            activity.swapAt(slot, last)
            index.move(connections[slot].key, from: last, to: slot)
            moved(to: slot)
        }
        return (connections.removeLast(), activity.removeLast())
    }

    /// Finalizes several connections where they lie, in ID order so that their events come out
    /// in a stable order, then takes them out from the highest slot down (a removal moves only
    /// the last record, which is then no longer one of them). Plain values are sorted, never the
    /// records.
    @inlinable mutating func finalize(_ due: [(slot: Int, reason: FinalizeReason)]) {
        var order: [DueConnection] = []
        order.reserveCapacity(due.count)
        for (slot, reason) in due { order.append(DueConnection(id: connections[slot].info.id, slot: slot, reason: reason)) }
        order.sort()
        var slots: [Int] = []
        slots.reserveCapacity(order.count)
        for d in order {
            connections[d.slot].finalize(reason: d.reason, lastSeen: activity[d.slot].lastSeen, context: &reassembly, sink: &sink)
            slots.append(d.slot)
        }
        slots.sort()
        for slot in slots.reversed() { discard(slot: slot) }
    }

    /// A connection leaving the table leaves its group's list (the last of the list takes its
    /// place there) and counts.
    @inlinable mutating func uncount(_ slot: Int) {
        let bucket = Int(activity[slot].bucket), place = Int(activity[slot].placeInBucket)
        let lastPlace = slotsInBucket[bucket].count - 1
        if place != lastPlace {
            let other = Int(slotsInBucket[bucket][lastPlace])
            slotsInBucket[bucket][place] = Int32(other)
            activity[other].placeInBucket = UInt32(place)
        }
        slotsInBucket[bucket].removeLast()
        if activity[slot].isClosed { closedInBucket[bucket] -= 1 }
    }

    /// Drops a finalized connection: the last record moves into its slot (a move, not the
    /// swap-and-copy `remove` needs to hand the record back).
    @inlinable mutating func discard(slot: Int) {
        uncount(slot)
        index.remove(connections[slot].key, slot: slot)
        let last = connections.count - 1
        connections.removeFillingFromLast(slot)
        if slot == last {
            activity.removeLast()
            return
        }
        activity[slot] = activity.removeLast()
        index.move(connections[slot].key, from: last, to: slot)
        moved(to: slot)
    }

    /// The connection now in `slot` came from the last one: its group's list says so.
    @inlinable mutating func moved(to slot: Int) {
        slotsInBucket[Int(activity[slot].bucket)][Int(activity[slot].placeInBucket)] = Int32(slot)
    }

    /// `victims`, all finalized for `reason`.
    @inlinable mutating func finalize(_ victims: [Int], reason: FinalizeReason) {
        var due: [(slot: Int, reason: FinalizeReason)] = []
        due.reserveCapacity(victims.count)
        for slot in victims { due.append((slot, reason)) }
        finalize(due)
    }

    // MARK: Time and limits

    /// Finalizes idle and closed connections as capture time passes.
    /// Finalizes the connections idle or closed long enough at `clock`.
    public mutating func sweep(at clock: Timestamp) {
        let due = activity.due(at: clock, options: reassembly.options)
        if !due.isEmpty { finalize(due) }
    }

    /// Past `maxConnections`: finalize the least recently active sixteenth in one pass, so a
    /// flood of new 4-tuples costs amortized O(log n) per connection.
    @inlinable mutating func evictLeastRecentlyActive(bucket: Int) {
        let victims = leastRecentlyActive(max(1, slotsInBucket[bucket].count / 16), closedOnly: false, in: bucket)
        reassembly.countFinalized(byConnectionLimit: victims.count)
        finalize(victims, reason: .connectionLimit)
    }

    /// Past `maxClosedConnections`: finalize the least recently active quarter of the closed
    /// ones in one pass (a scan of the table per thousand or so closed connections).
    @inlinable mutating func finalizeLeastRecentlyClosed(bucket: Int) {
        let limit = ConnectionBucket.share(of: reassembly.options.maxClosedConnections)
        let victims = leastRecentlyActive(max(1, closedInBucket[bucket] - limit + limit / 4), closedOnly: true, in: bucket)
        reassembly.countFinalized(byClosedLimit: victims.count)
        finalize(victims, reason: .closedLimit)
    }

    /// A limit's victims in `bucket` (`ConnectionActivity.leastRecentlyActive`), sorted out in
    /// the table's kept array (taken out for the call: the IDs are read from the table meanwhile).
    @inlinable mutating func leastRecentlyActive(_ count: Int, closedOnly: Bool, in bucket: Int) -> [Int] {
        var scratch: [(lastSeen: Timestamp, slot: Int)] = []
        swap(&scratch, &limitCandidates)
        defer { swap(&scratch, &limitCandidates) }
        return activity.leastRecentlyActive(count, closedOnly: closedOnly, among: slotsInBucket[bucket], scratch: &scratch) { connections[$0].info.id }
    }

    /// Past the global buffer limit: the direction holding the most skips its first hole.
    private mutating func evictBufferedData() {
        while reassembly.bufferedBytes > reassembly.options.maxBufferedBytesTotal {
            var best: (slot: Int, direction: Direction, cost: Int)?
            for slot in connections.indices {
                for direction in Direction.allCases where connections[slot].bufferedCost(direction) > (best?.cost ?? 0) {
                    best = (slot, direction, connections[slot].bufferedCost(direction))
                }
            }
            guard let best else { return }
            reassembly.globalLimitEvictions += 1
            connections[best.slot].skipFirstHole(best.direction, reason: .bufferLimit, context: &reassembly, sink: &sink)
        }
    }
}
