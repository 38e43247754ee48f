/// Which dissector analyzes which connection: per server port, else the default.
public struct DissectorChoice: Sendable {
    public var byDefault: DissectorSpec?
    public var byServerPort: [UInt16: DissectorSpec]

    public init(byDefault: DissectorSpec? = nil, byServerPort: [UInt16: DissectorSpec] = [:]) {
        self.byDefault = byDefault
        self.byServerPort = byServerPort
    }

    public func spec(for connection: ConnectionInfo) -> DissectorSpec? {
        byServerPort[connection.server.port] ?? byDefault
    }
}

/// A finalized connection with what its dissector found in each direction.
public struct ConnectionAnalysis: Sendable {
    public var summary: ConnectionSummary
    /// nil when no dissector applied to this connection.
    public var spec: DissectorSpec?
    /// Indexed by `Direction.rawValue`.
    public var directions: [DirectionAnalysis]
}

/// The stream sink behind `analyze`: runs a dissector over both directions of every connection.
public struct Analyzer: StreamSink {
    public let choice: DissectorChoice
    public private(set) var log = AnalysisLog()
    public private(set) var connections: [ConnectionAnalysis] = []
    /// Called with every message in stream order, when set (`--messages`).
    public var onMessage: ((MessageRecord) -> Void)?
    /// Finished connections kept for the report; older ones are folded into `folded` (long
    /// live captures keep bounded memory).
    public var maxRetainedConnections = Int.max
    /// Totals of the finished connections no longer listed, per direction, and their number.
    public private(set) var folded = [DirectionAnalysis(), DirectionAnalysis()]
    public private(set) var foldedConnections = 0

    private struct Live {
        var info: ConnectionInfo
        var spec: DissectorSpec
        var analyzers: [DirectionAnalyzer]
    }

    /// A connection still open, as the live view shows it.
    public struct OpenConnection: Sendable {
        public var info: ConnectionInfo
        public var spec: DissectorSpec
        public var directions: [DirectionAnalysis]
    }

    /// The dissected connections still open, with their figures so far.
    public var openConnections: [OpenConnection] {
        live.values.map { OpenConnection(info: $0.info, spec: $0.spec, directions: $0.analyzers.map(\.analysis)) }
    }

    private var live: [ConnectionID: Live] = [:]

    public init(choice: DissectorChoice) { self.choice = choice }

    public mutating func connectionOpened(_ connection: ConnectionInfo) {
        guard let spec = choice.spec(for: connection) else { return }
        live[connection.id] = Live(
            info: connection, spec: spec,
            analyzers: Direction.allCases.map {
                DirectionAnalyzer(dissector: spec.makeDissector(isClient: $0 == .clientToServer), connection: connection.id, direction: $0)
            })
    }

    public mutating func data(_ chunk: StreamChunk) {
        guard live[chunk.connection] != nil else { return }
        log.recordMessages = onMessage != nil
        live[chunk.connection]!.analyzers[chunk.direction.rawValue].feed(chunk, log: &log)
        deliverMessages()
    }

    public mutating func gap(_ gap: StreamGap) {
        guard live[gap.connection] != nil else { return }
        live[gap.connection]!.analyzers[gap.direction.rawValue].gap(at: gap.offset, length: gap.length, log: &log)
        deliverMessages()
    }

    public mutating func connectionClosed(_ summary: ConnectionSummary) {
        guard var state = live.removeValue(forKey: summary.info.id) else {
            connections.append(ConnectionAnalysis(summary: summary, spec: nil, directions: []))
            foldOldConnections()
            return
        }
        var directions: [DirectionAnalysis] = []
        for direction in Direction.allCases {
            state.analyzers[direction.rawValue].finish(log: &log)
            var analysis = state.analyzers[direction.rawValue].analysis
            analysis.segments = summary[direction].segments
            analysis.segmentsOverMSS = summary[direction].segmentsOverMSS
            directions.append(analysis)
        }
        connections.append(ConnectionAnalysis(summary: summary, spec: state.spec, directions: directions))
        foldOldConnections()
    }

    /// Past `maxRetainedConnections`, the oldest quarter is folded into the totals in one go.
    private mutating func foldOldConnections() {
        let (threshold, overflow) = maxRetainedConnections.addingReportingOverflow(maxRetainedConnections / 4)
        guard !overflow, connections.count > threshold else { return }
        let count = connections.count - maxRetainedConnections
        for old in connections.prefix(count) where !old.directions.isEmpty {
            for d in Direction.allCases { folded[d.rawValue].merge(old.directions[d.rawValue]) }
        }
        foldedConnections += count
        connections.removeFirst(count)
    }

    private mutating func deliverMessages() {
        guard let onMessage, !log.messages.isEmpty else { return }
        for message in log.messages { onMessage(message) }
        log.messages.removeAll(keepingCapacity: true)
    }

    /// Connections in ID order.
    public var sortedConnections: [ConnectionAnalysis] { connections.sorted { $0.summary.info.id < $1.summary.info.id } }
}
