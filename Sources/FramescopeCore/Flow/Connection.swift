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
    /// Indexed by `Direction.rawValue`.
    public var directions: [DirectionStatistics]
    public var end: ConnectionEnd
    /// Why it was finalized before the end of the input, if it was.
    public var finalizedBy: FinalizeReason

    public subscript(direction: Direction) -> DirectionStatistics { directions[direction.rawValue] }

    public var synSeen: Bool { directions.contains { $0.synSeen } }
}

public enum FinalizeReason: String, Sendable {
    case endOfInput = "end-of-input"
    case closedTimeout = "closed-timeout"
    case idleTimeout = "idle-timeout"
    case connectionLimit = "connection-limit"
    case reused = "port-reuse"
}

/// One tracked connection: both half-streams, mutated in place inside the flow table.
struct Connection {
    var info: ConnectionInfo
    var key: FlowKey
    var lastSeen: Timestamp
    var packets = 0
    /// Sequence number of the client's SYN, when one opened the connection.
    var clientSequence: UInt32?
    var clientToServer = HalfStream()
    var serverToClient = HalfStream()

    /// A slot's placeholder once its connection is finalized.
    static let vacant: Connection = {
        let nowhere = Endpoint(address: IPAddress(ipv4: 0), port: 0)
        let info = ConnectionInfo(
            id: ConnectionID(-1), client: nowhere, server: nowhere, roleEvidence: .portHeuristic, firstFrame: 0, firstSeen: .zero)
        return Connection(info: info, key: FlowKey(nowhere, nowhere), lastSeen: .zero)
    }()

    var isVacant: Bool { info.id.rawValue < 0 }

    var isClosed: Bool {
        let a = clientToServer.statistics, b = serverToClient.statistics
        return a.rstSeen || b.rstSeen || (a.finSeen && b.finSeen)
    }

    var end: ConnectionEnd {
        let a = clientToServer.statistics, b = serverToClient.statistics
        if a.rstSeen || b.rstSeen { return .rst }
        if a.finSeen && b.finSeen { return .fin }
        if a.finSeen || b.finSeen { return .halfClosed }
        return .open
    }

    func direction(from source: Endpoint) -> Direction {
        source == info.client ? .clientToServer : .serverToClient
    }

    func summary(finalizedBy reason: FinalizeReason) -> ConnectionSummary {
        ConnectionSummary(
            info: info, lastSeen: lastSeen, packets: packets,
            directions: [clientToServer.statistics, serverToClient.statistics], end: end, finalizedBy: reason)
    }
}
