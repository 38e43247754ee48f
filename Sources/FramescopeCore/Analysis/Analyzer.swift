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
    /// How message bodies are checked as protobuf, on the connections it applies to.
    public let protobuf: ProtobufCheck?
    public private(set) var log = AnalysisLog()
    public private(set) var connections: [ConnectionAnalysis] = []
    /// Called with every message in stream order, when set (`--messages`).
    public var onMessage: ((MessageRecord) -> Void)? {
        didSet { log.recordMessages = onMessage != nil }
    }
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
        slots.filter { !$0.analyzers.isEmpty }.map { OpenConnection(info: $0.info, spec: $0.spec, directions: $0.analyzers.map(\.analysis)) }
    }

    @inline(__always)
    private func slot(of id: ConnectionID) -> Int? {
        guard id.rawValue < slotOf.count else { return nil }
        let slot = Int(slotOf[id.rawValue])
        return slot >= 0 ? slot : nil
    }

    /// Open connections' state in slots, found by connection ID through `slotOf` (IDs are
    /// dense): no hashing per chunk, and the state is mutated in place.
    private var slots: [Live] = []
    private var freeSlots: [Int] = []
    private var slotOf: [Int32] = []

    public init(choice: DissectorChoice, protobuf: ProtobufCheck? = nil, maxResyncWindowBytes: Int = 32 << 20) {
        self.choice = choice
        self.protobuf = protobuf
        log.maxResyncWindowBytes = maxResyncWindowBytes
    }

    public mutating func connectionOpened(_ connection: ConnectionInfo) {
        let id = connection.id.rawValue
        if id >= slotOf.count { slotOf += [Int32](repeating: -1, count: max(1024, id + 1 - slotOf.count)) }
        guard let spec = choice.spec(for: connection) else { return }
        let check = protobuf.flatMap { $0.applies(to: spec) ? $0 : nil }
        let state = Live(
            info: connection, spec: spec,
            analyzers: Direction.allCases.map {
                DirectionAnalyzer(
                    dissector: spec.makeDissector(isClient: $0 == .clientToServer), connection: connection.id, direction: $0, protobuf: check)
            })
        slotOf[id] = Int32(slots.place(state, reusing: &freeSlots))
    }

    public mutating func data(_ chunk: StreamChunk) {
        guard let slot = slot(of: chunk.connection) else { return }
        slots[slot].analyzers[chunk.direction.rawValue].feed(chunk, log: &log)
        if onMessage != nil { deliverMessages() }
    }

    public mutating func gap(_ gap: StreamGap) {
        guard let slot = slot(of: gap.connection) else { return }
        slots[slot].analyzers[gap.direction.rawValue].gap(at: gap.offset, length: gap.length, log: &log)
        if onMessage != nil { deliverMessages() }
    }

    public mutating func connectionClosed(_ summary: ConnectionSummary) {
        let taken = slot(of: summary.info.id).map { slot -> Live in
            let state = slots[slot]
            slots[slot].analyzers = []  // vacant
            freeSlots.append(slot)
            slotOf[summary.info.id.rawValue] = -1
            return state
        }
        guard var state = taken else {
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
