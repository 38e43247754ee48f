/// How client and server were told apart.
public enum RoleEvidence: String, Sendable {
    /// The client sent the SYN.
    case syn
    /// The client received the SYN/ACK.
    case synAck = "syn-ack"
    /// No handshake seen: the endpoint with the lower port is the server (ties: the
    /// destination of the first packet).
    case portHeuristic = "port-heuristic"
}

/// A connection's identity, as told to the sink when it opens.
public struct ConnectionInfo: Sendable {
    public var id: ConnectionID
    public var client: Endpoint
    public var server: Endpoint
    public var roleEvidence: RoleEvidence
    public var firstFrame: UInt64
    public var firstSeen: Timestamp
}

/// How a connection ended.
public enum ConnectionEnd: String, Sendable {
    case fin       // FIN seen in both directions
    case halfClosed = "half-closed"  // FIN in one direction only
    case rst
    case open
}

/// A finalized connection: identity and per-direction statistics.
public struct ConnectionSummary: Sendable {
    public var info: ConnectionInfo
    public var lastSeen: Timestamp
    public var packets: Int
    public var directions: PerDirection<DirectionStatistics>
    public var end: ConnectionEnd
    /// Why it was finalized before the end of the input, if it was.
    public var finalizedBy: FinalizeReason
    /// From the last SYN to the first ACK after it (tshark's `tcp.analysis.initial_rtt`),
    /// nanoseconds; nil without a handshake.
    public var initialRTTNanoseconds: Int64?

    public subscript(direction: Direction) -> DirectionStatistics { directions[direction] }

    public var synSeen: Bool { directions.clientToServer.synSeen || directions.serverToClient.synSeen }
}

public enum FinalizeReason: String, Sendable {
    case endOfInput = "end-of-input"
    case closedTimeout = "closed-timeout"
    case closedLimit = "closed-limit"
    case idleTimeout = "idle-timeout"
    case connectionLimit = "connection-limit"
    case reused = "port-reuse"
}

/// The one record of a tracked connection: identity, both half-streams and the sink's state
/// for it, mutated in place inside the flow table. When it was last active the table keeps
/// apart (`FlowTable.Activity`), where its sweeps read it.
@usableFromInline struct Connection<State> {
    @usableFromInline var info: ConnectionInfo
    var clientToServer = HalfStream()
    var serverToClient = HalfStream()
    var tcp = TCPAnalysis()
    /// Its group (`ConnectionBucket`), whose figures its buffers count in.
    var bucket: UInt8 = 0
    /// `clientSequence` as a flag and a number, both in the TCP analysis's tail padding (an
    /// optional's tag byte after them cost the record 8 bytes).
    private var openedBySYN = false
    private var synSequence: UInt32 = 0
    /// What the sink keeps for this connection.
    var state: State

    /// Sequence number of the client's SYN, when one opened the connection.
    var clientSequence: UInt32? {
        get { openedBySYN ? synSequence : nil }
        set {
            openedBySYN = newValue != nil
            synSequence = newValue ?? 0
        }
    }

    /// Packets of both directions (each half-stream counts its own).
    var packets: Int { clientToServer.statistics.packets + serverToClient.statistics.packets }

    /// Computed, not stored: the index compares it only on a hash match.
    @usableFromInline var key: FlowKey { FlowKey(info.client, info.server) }

    /// Whether a segment from `source` to `destination` is this connection's (either way).
    @inline(__always)
    func has(_ source: Endpoint, _ destination: Endpoint) -> Bool {
        (source == info.client && destination == info.server) || (source == info.server && destination == info.client)
    }

    init(info: ConnectionInfo, state: State) {
        self.info = info
        self.state = state
    }

    /// Reads the flags in place (a copy of the statistics retains their out-of-line box).
    var isClosed: Bool {
        clientToServer.statistics.rstSeen || serverToClient.statistics.rstSeen
            || (clientToServer.statistics.finSeen && serverToClient.statistics.finSeen)
    }

    var end: ConnectionEnd {
        if clientToServer.statistics.rstSeen || serverToClient.statistics.rstSeen { return .rst }
        let (a, b) = (clientToServer.statistics.finSeen, serverToClient.statistics.finSeen)
        if a && b { return .fin }
        if a || b { return .halfClosed }
        return .open
    }

    func direction(from source: Endpoint) -> Direction {
        source == info.client ? .clientToServer : .serverToClient
    }

    /// Out-of-order bytes (with overhead) a direction holds.
    func bufferedCost(_ direction: Direction) -> Int {
        direction == .clientToServer ? clientToServer.bufferedCost : serverToClient.bufferedCost
    }

    /// Hands one segment to the half-stream of its direction.
    mutating func receive<Sink: StreamSink>(
        _ segment: TCPSegment, frame: UInt64, timestamp: Timestamp, context: inout ReassemblyContext, sink: inout Sink
    ) where Sink.ConnectionState == State {
        context.bucket = Int(bucket)
        let direction = direction(from: segment.source)
        let traits = tcp.observe(
            segment, from: direction, at: timestamp, context: &context,
            clientToServer: &clientToServer.statistics.tcp, serverToClient: &serverToClient.statistics.tcp)
        let route = HalfStream.Route(connection: info.id, direction: direction)
        switch direction {
        case .clientToServer:
            clientToServer.receive(segment, frame: frame, timestamp: timestamp, traits: traits, route: route, context: &context, sink: &sink, state: &state)
        case .serverToClient:
            serverToClient.receive(segment, frame: frame, timestamp: timestamp, traits: traits, route: route, context: &context, sink: &sink, state: &state)
        }
    }

    /// Past a buffer limit: `direction` skips its first hole as a gap.
    mutating func skipFirstHole<Sink: StreamSink>(
        _ direction: Direction, reason: GapReason, context: inout ReassemblyContext, sink: inout Sink
    ) where Sink.ConnectionState == State {
        context.bucket = Int(bucket)
        let route = HalfStream.Route(connection: info.id, direction: direction)
        switch direction {
        case .clientToServer: clientToServer.skipFirstHole(reason: reason, route: route, context: &context, sink: &sink, state: &state)
        case .serverToClient: serverToClient.skipFirstHole(reason: reason, route: route, context: &context, sink: &sink, state: &state)
        }
    }

    /// Delivers what is left (holes become gaps) and tells the sink the connection is done.
    @usableFromInline mutating func finalize<Sink: StreamSink>(
        reason: FinalizeReason, lastSeen: Timestamp, context: inout ReassemblyContext, sink: inout Sink
    ) where Sink.ConnectionState == State {
        let id = info.id
        context.bucket = Int(bucket)
        tcp.release(context: &context)
        clientToServer.flush(route: .init(connection: id, direction: .clientToServer), context: &context, sink: &sink, state: &state)
        serverToClient.flush(route: .init(connection: id, direction: .serverToClient), context: &context, sink: &sink, state: &state)
        sink.connectionClosed(taking: takeSummary(finalizedBy: reason, lastSeen: lastSeen), state: state)
    }

    /// `summary`, with the directions' statistics moved into it, not copied (a copy retained
    /// the boxes they hold, and the record's end released them): for the finalized connection,
    /// whose record is dropped next.
    private mutating func takeSummary(finalizedBy reason: FinalizeReason, lastSeen: Timestamp) -> ConnectionSummary {
        let (packets, end) = (packets, end)  // (read from the statistics before they go)
        var sent = PerDirection(clientToServer: DirectionStatistics(), serverToClient: DirectionStatistics())
        swap(&sent.clientToServer, &clientToServer.statistics)
        swap(&sent.serverToClient, &serverToClient.statistics)
        return summary(sent, packets: packets, end: end, finalizedBy: reason, lastSeen: lastSeen)
    }

    func summary(finalizedBy reason: FinalizeReason, lastSeen: Timestamp) -> ConnectionSummary {
        let sent = PerDirection(clientToServer: clientToServer.statistics, serverToClient: serverToClient.statistics)
        return summary(sent, packets: packets, end: end, finalizedBy: reason, lastSeen: lastSeen)
    }

    /// The summary of this connection with `directions`' statistics (read from it, or taken out).
    private func summary(
        _ directions: consuming PerDirection<DirectionStatistics>, packets: Int, end: ConnectionEnd, finalizedBy reason: FinalizeReason,
        lastSeen: Timestamp
    ) -> ConnectionSummary {
        ConnectionSummary(
            info: info, lastSeen: lastSeen, packets: packets, directions: directions, end: end,
            finalizedBy: reason, initialRTTNanoseconds: tcp.initialRTT > 0 ? tcp.initialRTT : nil)
    }
}
