/// Decodes packets, tracks connections and reassembles both directions of each, handing the
/// streams to `Sink`. Generic over the sink so that the per-packet path has no dynamic calls.
///
/// Connections live in a slot array mutated in place (never copied out and written back);
/// the 4-tuple index holds fixed-width keys only.
public struct FlowTable<Sink: StreamSink> {
    public var sink: Sink
    public private(set) var context: ReassemblyContext
    public private(set) var decodeStatistics = DecodeStatistics()
    /// Connections opened so far (the next ID).
    public private(set) var connectionsOpened = 0
    public var activeConnections: Int { index.count }

    /// Connections, mutated in place; a finalized one leaves a vacant slot for reuse. Not
    /// optional: reading a field through `slots[i]!` copies the whole connection.
    private var slots: [Connection] = []
    private var freeSlots: [Int] = []
    private var index = FlowIndex()
    private var clock = Timestamp(nanoseconds: .min)
    private var nextSweep = Timestamp(nanoseconds: .min)

    public init(sink: Sink, options: ReassemblyOptions = ReassemblyOptions()) {
        self.sink = sink
        self.context = ReassemblyContext(options: options)
    }

    // MARK: Input

    /// Decodes one captured packet and feeds it to its connection.
    public mutating func process(_ bytes: UnsafeRawBufferPointer, info: CaptureInfo) {
        decodeStatistics.packets += 1
        switch PacketDecoder.decode(bytes, linkType: info.linkType) {
        case .tcp(let segment):
            decodeStatistics.tcpSegments += 1
            receive(segment, frame: info.frame, timestamp: info.timestamp)
        case .skipped(let reason):
            decodeStatistics.count(reason)
        }
        advanceClock(to: info.timestamp)
    }

    /// Feeds one decoded segment (tests and synthetic sources call this directly).
    public mutating func receive(_ segment: TCPSegment, frame: UInt64, timestamp: Timestamp) {
        let key = FlowKey(segment.source, segment.destination)
        let slot: Int
        if let existing = index[key], !startsNewConnection(segment, existing: slots[existing]) {
            slot = existing
        } else {
            if let existing = index[key] { finalize(slot: existing, reason: .reused) }
            slot = open(segment, key: key, frame: frame, timestamp: timestamp)
        }
        slots[slot].packets += 1
        slots[slot].lastSeen = timestamp
        let direction = slots[slot].direction(from: segment.source)
        let route = HalfStream.Route(connection: slots[slot].info.id, direction: direction)
        switch direction {
        case .clientToServer:
            let peerMSS = slots[slot].serverToClient.statistics.maximumSegmentSize
            slots[slot].clientToServer.receive(segment, frame: frame, timestamp: timestamp, route: route, peerMSS: peerMSS, context: &context, sink: &sink)
        case .serverToClient:
            let peerMSS = slots[slot].clientToServer.statistics.maximumSegmentSize
            slots[slot].serverToClient.receive(segment, frame: frame, timestamp: timestamp, route: route, peerMSS: peerMSS, context: &context, sink: &sink)
        }
        if context.bufferedBytes > context.options.maxBufferedBytesTotal { evictBufferedData() }
    }

    /// Finalizes every connection still open, in ID order.
    public mutating func finish() {
        let open = index.entries.map(\.slot).sorted { slots[$0].info.id < slots[$1].info.id }
        for slot in open { finalize(slot: slot, reason: .endOfInput) }
    }

    // MARK: Connections

    /// A SYN (without ACK) on a known 4-tuple starts a new connection unless it repeats the
    /// SYN that opened the current one (tshark's rule for reused ports).
    private func startsNewConnection(_ segment: TCPSegment, existing: Connection) -> Bool {
        guard segment.flags.contains(.syn), !segment.flags.contains(.ack) else { return false }
        guard existing.info.client == segment.source, let isn = existing.clientSequence else { return true }
        return isn != segment.sequence
    }

    private mutating func open(_ segment: TCPSegment, key: FlowKey, frame: UInt64, timestamp: Timestamp) -> Int {
        if index.count >= context.options.maxConnections { evictLeastRecentlyActive() }
        let (client, server, evidence) = roles(of: segment)
        let info = ConnectionInfo(
            id: ConnectionID(connectionsOpened), client: client, server: server, roleEvidence: evidence,
            firstFrame: frame, firstSeen: timestamp)
        connectionsOpened += 1
        var connection = Connection(info: info, key: key, lastSeen: timestamp)
        if segment.flags.contains(.syn) && !segment.flags.contains(.ack) { connection.clientSequence = segment.sequence }
        let slot = slots.place(connection, reusing: &freeSlots)
        index.insert(key, slot: slot)
        sink.connectionOpened(info)
        return slot
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

    private mutating func finalize(slot: Int, reason: FinalizeReason) {
        guard !slots[slot].isVacant else { return }
        var connection = slots[slot]
        slots[slot] = .vacant  // take it out, so flushing mutates a uniquely referenced value
        let id = connection.info.id
        connection.clientToServer.flush(route: .init(connection: id, direction: .clientToServer), context: &context, sink: &sink)
        connection.serverToClient.flush(route: .init(connection: id, direction: .serverToClient), context: &context, sink: &sink)
        sink.connectionClosed(connection.summary(finalizedBy: reason))
        index.remove(connection.key)
        freeSlots.append(slot)
    }

    // MARK: Time and limits

    /// Finalizes idle and closed connections as capture time passes.
    private mutating func advanceClock(to timestamp: Timestamp) {
        guard timestamp > clock else { return }
        clock = timestamp
        guard clock >= nextSweep else { return }
        let options = context.options
        let interval = max(1_000_000_000, min(options.idleTimeout, options.closedTimeout) / 4)
        nextSweep = Timestamp(nanoseconds: clock.nanoseconds &+ interval)
        for slot in slots.indices where !slots[slot].isVacant {
            let connection = slots[slot]
            let idle = clock.nanoseconds - connection.lastSeen.nanoseconds
            if connection.isClosed && idle > options.closedTimeout {
                finalize(slot: slot, reason: .closedTimeout)
            } else if idle > options.idleTimeout {
                finalize(slot: slot, reason: .idleTimeout)
            }
        }
    }

    /// Past `maxConnections`: finalize the least recently active sixteenth in one pass, so a
    /// flood of new 4-tuples costs amortized O(log n) per connection.
    private mutating func evictLeastRecentlyActive() {
        let live = slots.indices.filter { !slots[$0].isVacant }
        let victims = live.sorted { slots[$0].lastSeen < slots[$1].lastSeen }.prefix(max(1, live.count / 16))
        for slot in victims {
            context.connectionLimitEvictions += 1
            finalize(slot: slot, reason: .connectionLimit)
        }
    }

    /// Past the global buffer limit: the direction holding the most skips its first hole.
    private mutating func evictBufferedData() {
        while context.bufferedBytes > context.options.maxBufferedBytesTotal {
            var best: (slot: Int, direction: Direction, cost: Int)?
            for slot in slots.indices where !slots[slot].isVacant {
                let c = slots[slot]
                for (direction, cost) in [(Direction.clientToServer, c.clientToServer.bufferedCost), (.serverToClient, c.serverToClient.bufferedCost)]
                where cost > (best?.cost ?? 0) {
                    best = (slot, direction, cost)
                }
            }
            guard let best else { return }
            context.globalLimitEvictions += 1
            let route = HalfStream.Route(connection: slots[best.slot].info.id, direction: best.direction)
            switch best.direction {
            case .clientToServer:
                slots[best.slot].clientToServer.skipFirstHole(reason: .bufferLimit, route: route, context: &context, sink: &sink)
            case .serverToClient:
                slots[best.slot].serverToClient.skipFirstHole(reason: .bufferLimit, route: route, context: &context, sink: &sink)
            }
        }
    }
}
