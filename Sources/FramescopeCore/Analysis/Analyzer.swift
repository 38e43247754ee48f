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

    /// The SPEC, when one frames every dissected connection (figures by type value add up
    /// across connections only then: two protocols' values mean different things).
    public var onlySpec: DissectorSpec? {
        byServerPort.isEmpty ? byDefault : byDefault == nil && byServerPort.count == 1 ? byServerPort.first?.value : nil
    }
}

/// A finalized connection with what its dissector found in each direction. A class: reports
/// hold tens of thousands of these, and sorting or listing them then moves references, not
/// kilobyte records.
public final class ConnectionAnalysis: Sendable {
    public let summary: ConnectionSummary
    /// The plan of the SPEC that framed this connection, shared by every connection it framed
    /// (nil when no dissector applied): a copy of the SPEC per connection cost 900 instructions
    /// to make and free (its strings, tables and sets), a fortieth of the run on 50,000 flows.
    let plan: FramingPlan?
    /// nil when no dissector applied to this connection.
    public var spec: DissectorSpec? { plan?.spec }
    /// `spec?.name`, `spec?.hasTypeField` and whether it frames by a length field, without a
    /// copy of the SPEC (a report reads them for every connection).
    public var specName: String? { plan?.name }
    public var specHasTypeField: Bool { plan?.hasTypeField ?? false }
    public var isLengthFramed: Bool {
        guard let plan, case .lengthField = plan.spec.kind else { return false }
        return true
    }
    /// Whether a dissector applied (then `figures` are its; else they are blank).
    public let isDissected: Bool
    /// What the dissector found per direction. Stored plainly, not as an optional: reading a
    /// field through an optional copied both directions' figures, a retain and a release for
    /// every box they hold, several times per finished connection.
    public let figures: PerDirection<DirectionAnalysis>

    /// nil when no dissector applied to this connection.
    public var directions: PerDirection<DirectionAnalysis>? { isDissected ? figures : nil }

    init(summary: consuming ConnectionSummary, plan: FramingPlan?, directions: PerDirection<DirectionAnalysis>?) {
        self.summary = summary
        self.plan = plan
        // `if let`, not `??`: the generic `??` copied both directions' figures through value
        // witnesses (350 instructions each).
        if let directions {
            isDissected = true
            figures = directions
        } else {
            isDissected = false
            figures = PerDirection(clientToServer: DirectionAnalysis(), serverToClient: DirectionAnalysis())
        }
    }

    /// Whether a direction ended with malformed headers or a message open: where a SPEC next
    /// to this one may frame better.
    public func endedInTrouble(_ direction: Direction) -> Bool {
        guard isDissected else { return false }
        return direction == .clientToServer
            ? figures.clientToServer.malformed > 0 || figures.clientToServer.incompleteAtEnd > 0
            : figures.serverToClient.malformed > 0 || figures.serverToClient.incompleteAtEnd > 0
    }

    /// Adds the figures of both directions to `totals`.
    func addFigures(to totals: inout PerDirection<DirectionAnalysis>) {
        guard isDissected else { return }
        totals.clientToServer.mergeCounts(figures.clientToServer)
        totals.serverToClient.mergeCounts(figures.serverToClient)
    }
}

/// How one SPEC frames its connections, made once and shared by all of them.
public final class FramingPlan: Sendable {
    let spec: DissectorSpec
    /// Per direction: PostgreSQL frames the client's and the server's start differently.
    let dissectors: PerDirection<SharedDissector>
    /// What the body check holds bodies to, when it applies to this SPEC (nil: unchecked).
    let bodyRules: BodyRules?
    /// The SPEC's request and response types (nil: every message is one), held apart so the
    /// pairing per message copies no SPEC.
    let requestTypes: Set<UInt64>?, responseTypes: Set<UInt64>?
    /// `spec.name` and `spec.hasTypeField`, held apart: reading them through `spec` copied the
    /// SPEC (224 bytes and a retain of each box) on every connection a report lists.
    let name: String, hasTypeField: Bool

    init(spec: DissectorSpec, protobuf: ProtobufCheck?) {
        self.spec = spec
        (name, hasTypeField) = (spec.name, spec.hasTypeField)
        let client = SharedDissector(spec.makeDissector(isClient: true)), server = spec.makeDissector(isClient: false)
        dissectors = PerDirection(clientToServer: client, serverToClient: server == client.dissector ? client : SharedDissector(server))
        bodyRules = protobuf.flatMap { $0.applies(to: spec) ? BodyRules(schema: $0.schema) : nil }
        requestTypes = spec.requestTypes
        responseTypes = spec.responseTypes
    }
}

/// The stream sink behind `analyze` and `watch`: frames both directions of every connection
/// that has a dissector. Its per-connection state lives in the flow table's connection record.
public struct Analyzer: StreamSink {
    /// A dissected connection's framing state (nil for connections without a dissector). Kept
    /// out of line: the flow table's connection records stay small and dense (a 50,000-flow
    /// capture moved 2.7 KB records around otherwise), at one allocation per connection and one
    /// per direction that carries data.
    public final class Framing {
        let plan: FramingPlan
        let connection: ConnectionID
        // Only the flow table's connection record refers to this object, and only the analyzer
        // mutates it, one call at a time: the runtime's exclusivity check per chunk (3% of the
        // instructions) proves nothing here, hence `@exclusivity(unchecked)`.
        /// Each direction's analyzer, made at its first byte or gap: a direction that carries
        /// nothing allocates nothing (one of the two in 18,480 of the 21,316 connections that
        /// carry data in the benchmark's many-flow capture; 544 bytes each with its allocation).
        @exclusivity(unchecked) var clientToServer: DirectionFraming?
        @exclusivity(unchecked) var serverToClient: DirectionFraming?
        /// The client's requests waiting for the server's responses.
        @exclusivity(unchecked) var requests = RequestQueue()
        /// With `--mss`: the same directions framed as captured, for the figures without it.
        @exclusivity(unchecked) var asCaptured: AsCaptured?

        init(plan: FramingPlan, connection: ConnectionID) {
            self.plan = plan
            self.connection = connection
        }

        public var spec: DissectorSpec { plan.spec }

        func makeAnalyzer(_ direction: Direction) -> DirectionAnalyzer {
            DirectionAnalyzer(dissector: plan.dissectors[direction], connection: connection, direction: direction, bodyRules: plan.bodyRules)
        }

        /// `direction`'s analyzer, made at its first use.
        func analyzer(_ direction: Direction) -> DirectionFraming {
            switch direction {
            case .clientToServer:
                if let made = clientToServer { return made }
                let made = DirectionFraming(makeAnalyzer(direction))
                clientToServer = made
                return made
            case .serverToClient:
                if let made = serverToClient { return made }
                let made = DirectionFraming(makeAnalyzer(direction))
                serverToClient = made
                return made
            }
        }

        /// `direction`'s analyzer if it was ever used.
        func existing(_ direction: Direction) -> DirectionFraming? {
            direction == .clientToServer ? clientToServer : serverToClient
        }
    }

    /// One direction's analyzer, in an allocation of its own (see `Framing`).
    final class DirectionFraming {
        @exclusivity(unchecked) var analyzer: DirectionAnalyzer

        init(_ analyzer: DirectionAnalyzer) { self.analyzer = analyzer }
    }

    /// A connection's directions framed as captured, beside the re-cut ones (`--mss`).
    final class AsCaptured {
        @exclusivity(unchecked) var directions: PerDirection<DirectionAnalyzer>

        init(_ directions: PerDirection<DirectionAnalyzer>) { self.directions = directions }
    }

    /// A connection's framing: none (no dissector applies), waiting (one applies and no byte has
    /// arrived yet: nothing allocated, the plan's reference only), or under way. Connections
    /// that never carry a byte are common — scans, health checks, 28,684 of the 50,000 in the
    /// benchmark's many-flow capture — and cost no framing object.
    public enum ConnectionFraming {
        case undissected
        case waiting(FramingPlan)
        case framing(Framing)
    }

    public typealias ConnectionState = ConnectionFraming

    public let choice: DissectorChoice
    /// How message bodies are checked as protobuf, on the connections it applies to.
    public let protobuf: ProtobufCheck?
    public internal(set) var context: AnalysisContext
    /// The most recently finished connections, up to `maxRetainedConnections` (every finished
    /// one is in `finished` and goes to `onConnection`).
    public private(set) var connections: [ConnectionAnalysis] = []
    /// Called with every message in stream order, when set (`--messages`).
    public var onMessage: ((MessageRecord) -> Void)? {
        didSet { context.recordMessages = onMessage != nil }
    }
    /// Called with every connection as it finishes: where a report that lists many connections
    /// streams them out instead of keeping them.
    public var onConnection: ((ConnectionAnalysis) -> Void)?
    /// Finished connections kept in `connections`: memory follows the connections open at once,
    /// not the capture's total, when this is bounded.
    public var maxRetainedConnections = Int.max
    /// What every finished connection added up to.
    public internal(set) var finished = FinishedConnections()
    /// Finished connections counted in `finished` but no longer in `connections`.
    public var foldedConnections: Int { finished.count - connections.count }
    /// With `--mss`: every dissected direction framed as captured too, its figures summed here,
    /// so a report shows both (its own context keeps the re-cut figures' evidence unmixed).
    public internal(set) var asCaptured: PerDirection<DirectionAnalysis>?
    private var asCapturedContext: AnalysisContext?

    private let defaultPlan: FramingPlan?
    private let portPlans: [UInt16: FramingPlan]

    /// - Parameters:
    ///   - evidenceBits: what a boundary found by recovery needs (see `BoundaryEvidence`).
    public init(
        choice: DissectorChoice, protobuf: ProtobufCheck? = nil, maxRecoveryBytes: Int = 32 << 20, midStream: MidStreamFraming = .search,
        evidenceBits: Double = RecoveryBudget.defaultThreshold, recutMSS: Int = 0
    ) {
        self.choice = choice
        self.protobuf = protobuf
        context = AnalysisContext(maxRecoveryBytes: maxRecoveryBytes, midStream: midStream, evidenceBits: evidenceBits)
        context.recutMSS = recutMSS
        if recutMSS > 0 {
            asCaptured = PerDirection { _ in DirectionAnalysis() }
            asCapturedContext = AnalysisContext(maxRecoveryBytes: maxRecoveryBytes, midStream: midStream, evidenceBits: evidenceBits)
        }
        defaultPlan = choice.byDefault.map { FramingPlan(spec: $0, protobuf: protobuf) }
        portPlans = choice.byServerPort.mapValues { FramingPlan(spec: $0, protobuf: protobuf) }
    }

    /// Selects messages for `--export-messages` (nil: none).
    public mutating func export(_ selection: MessageExport?) { context.export = selection }

    public mutating func connectionOpened(_ connection: ConnectionInfo) -> ConnectionFraming {
        guard let plan = portPlans[connection.server.port] ?? defaultPlan else { return .undissected }
        return .waiting(plan)
    }

    /// The connection's framing, started at its first byte (or gap). Mutating though it changes
    /// nothing of the analyzer: as a plain method it had the whole analyzer (2.5 KB) copied per
    /// chunk to read one field.
    private mutating func framing(_ state: inout ConnectionFraming, connection: ConnectionID) -> Framing? {
        switch state {
        case .framing(let framing):
            return framing
        case .undissected:
            return nil
        case .waiting(let plan):
            let framing = Framing(plan: plan, connection: connection)
            if asCapturedContext != nil { framing.asCaptured = AsCaptured(PerDirection(framing.makeAnalyzer)) }
            state = .framing(framing)
            return framing
        }
    }

    public mutating func data(_ chunk: StreamChunk, state: inout ConnectionFraming) {
        guard let framing = framing(&state, connection: chunk.connection) else { return }
        framing.analyzer(chunk.direction).analyzer.feed(chunk, context: &context)
        if !context.completed.isEmpty { pair(chunk.direction, framing) }
        if onMessage != nil { deliverMessages() }
        if let shadow = framing.asCaptured {
            switch chunk.direction {
            case .clientToServer: shadow.directions.clientToServer.feed(chunk, context: &asCapturedContext!)
            case .serverToClient: shadow.directions.serverToClient.feed(chunk, context: &asCapturedContext!)
            }
            asCapturedContext!.completed.removeAll(keepingCapacity: true)
        }
    }

    /// The messages this chunk completed: the client's wait as requests, the server's answer them.
    private mutating func pair(_ direction: Direction, _ framing: Framing) {
        if framing.requests.pushing {  // no request/response connection: counted, not paired
            if direction == .serverToClient { context.responseTimes.unpaired += context.completed.count }
            context.completed.removeAll(keepingCapacity: true)
            return
        }
        let plan = framing.plan
        for i in context.completed.indices {
            let (type, time) = context.completed[i]
            if let named = direction == .clientToServer ? plan.requestTypes : plan.responseTypes {
                guard let type, named.contains(type) else { continue }
            }
            if direction == .clientToServer {
                framing.requests.request(type: type, at: time, context: &context)
            } else {
                framing.requests.response(at: time, context: &context)
            }
        }
        context.completed.removeAll(keepingCapacity: true)
    }

    public mutating func gap(_ gap: StreamGap, state: inout ConnectionFraming) {
        guard let framing = framing(&state, connection: gap.connection) else { return }
        framing.analyzer(gap.direction).analyzer.gap(at: gap.offset, length: gap.length, context: &context)
        if !context.completed.isEmpty { pair(gap.direction, framing) }
        if onMessage != nil { deliverMessages() }
        if let shadow = framing.asCaptured {
            shadow.directions[gap.direction].gap(at: gap.offset, length: gap.length, context: &asCapturedContext!)
            asCapturedContext!.completed.removeAll(keepingCapacity: true)
        }
    }

    public mutating func connectionClosed(_ summary: ConnectionSummary, state: consuming ConnectionFraming) {
        connectionClosed(taking: summary, state: state)
    }

    /// The connection's analysis keeps `summary` itself.
    public mutating func connectionClosed(taking summary: consuming ConnectionSummary, state: consuming ConnectionFraming) {
        let framing: Framing
        switch state {
        case .undissected:
            keep(ConnectionAnalysis(summary: summary, plan: nil, directions: nil))
            return
        case .waiting(let plan):
            keep(Self.analysis(summary, untouched: plan))
            return
        case .framing(let started):
            framing = started
        }
        // (A direction never used has nothing to finish.)
        for direction in Direction.allCases {
            guard let used = framing.existing(direction) else { continue }
            used.analyzer.finish(context: &context)
            if !context.completed.isEmpty { pair(direction, framing) }
        }
        framing.requests.finish(context: &context)
        // Recovery decides at the end too: the messages it found then are delivered now.
        if onMessage != nil { deliverMessages() }
        if let shadow = framing.asCaptured {
            for direction in Direction.allCases {
                shadow.directions[direction].finish(context: &asCapturedContext!)
                var analysis = shadow.directions[direction].analysis
                analysis.segments = summary[direction].segments
                asCaptured?[direction].merge(analysis)
            }
            asCapturedContext!.completed.removeAll(keepingCapacity: true)
        }
        keep(Self.analysis(summary, framing, finished: true))
    }

    /// A connection still open, with its figures so far (the live view).
    public func analysis(ofOpen summary: ConnectionSummary, _ state: ConnectionFraming) -> ConnectionAnalysis {
        switch state {
        case .undissected: ConnectionAnalysis(summary: summary, plan: nil, directions: nil)
        case .waiting(let plan): Self.analysis(summary, untouched: plan)
        case .framing(let framing): Self.analysis(summary, framing)
        }
    }

    /// A dissected connection that carried no byte: what its untouched analyzers would report.
    private static func analysis(_ summary: consuming ConnectionSummary, untouched plan: FramingPlan) -> ConnectionAnalysis {
        func untouched(_ statistics: borrowing DirectionStatistics) -> DirectionAnalysis {
            var analysis = DirectionAnalysis()
            analysis.segments = statistics.segments
            analysis.segmentsOverMSS = statistics.segmentsOverMSS
            return analysis
        }
        let directions = PerDirection(
            clientToServer: untouched(summary.directions.clientToServer), serverToClient: untouched(summary.directions.serverToClient))
        return ConnectionAnalysis(summary: summary, plan: plan, directions: directions)
    }

    private static func analysis(_ summary: consuming ConnectionSummary, _ framing: Framing, finished: Bool = false) -> ConnectionAnalysis {
        // (Read here: `summary[direction]` in the closure copied a direction's statistics.)
        let segments = PerDirection(
            clientToServer: summary.directions.clientToServer.segments, serverToClient: summary.directions.serverToClient.segments)
        let overMSS = PerDirection(
            clientToServer: summary.directions.clientToServer.segmentsOverMSS, serverToClient: summary.directions.serverToClient.segmentsOverMSS)
        let directions = PerDirection { direction -> DirectionAnalysis in
            // A finished connection's figures are moved out of its framing, which goes with it
            // (a copy would retain every box they hold, and the framing's end release them).
            // A direction never used reports what an untouched analyzer would.
            var analysis = DirectionAnalysis()
            if let used = framing.existing(direction) {
                if finished { swap(&analysis, &used.analyzer.analysis) } else { analysis = used.analyzer.analysis }
            }
            analysis.segments = segments[direction] + analysis.recutSegments
            analysis.segmentsOverMSS = overMSS[direction]
            return analysis
        }
        return ConnectionAnalysis(summary: summary, plan: framing.plan, directions: directions)
    }

    /// Counts a finished connection, streams it out, and keeps it while there is room (past
    /// `maxRetainedConnections` the oldest quarter goes in one step).
    private mutating func keep(_ analysis: ConnectionAnalysis) {
        finished.add(analysis)
        context.evidence.connectionFinished(analysis.summary.info)
        onConnection?(analysis)
        guard maxRetainedConnections > 0 else { return }
        connections.append(analysis)
        let (threshold, overflow) = maxRetainedConnections.addingReportingOverflow(maxRetainedConnections / 4)
        guard !overflow, connections.count > threshold else { return }
        connections.removeFirst(connections.count - maxRetainedConnections)
    }

    private mutating func deliverMessages() {
        guard let onMessage, !context.messages.isEmpty else { return }
        for message in context.messages { onMessage(message) }
        context.messages.removeAll(keepingCapacity: true)
    }

    /// Connections in ID order.
    public var sortedConnections: [ConnectionAnalysis] { connections.sorted { $0.summary.info.id < $1.summary.info.id } }
}
