import FramescopeCore

/// The `analyze --format json` document, schema `framescope.report/1` (docs/json-schemas.md).
public struct AnalysisReport: Sendable {
    public var schema = "framescope.report/1"
    public var inputs: [FlowsReport.Input]
    public var packets: FlowsReport.Packets
    public var limits: FlowsReport.Limits
    public var dissectors: Dissectors
    public var totals: Totals
    /// The analyses behind `connections`, converted one at a time when written (a report can
    /// list 50,000 connections).
    public let analyses: [ConnectionAnalysis]
    public var connections: LazyMapSequence<[ConnectionAnalysis], Connection> {
        let check = protobufCheck
        return analyses.lazy.map { Connection($0, protobuf: check) }
    }
    /// What bodies were checked as; nil when they were not.
    public var protobuf: Protobuf? {
        protobufCheck.map { check in
            Protobuf(
                mode: check.schema == nil ? "wire" : "schema", message: check.schema?.rootName, countBy: check.schema?.countBy?.name,
                scope: check.scope == .varintDelimited ? "varint" : "length-framed")
        }
    }
    let protobufCheck: ProtobufCheck?
    /// Evidence, in stream order per connection (the first 10,000).
    public var events: [Event]
    public var eventsTotal: Int
    public var warnings: [String]
    /// Live captures only: the interface and what the kernel dropped.
    public var capture: Capture?

    public struct Capture: Sendable {
        public var interface: String
        public var filter: String?
        /// Packets framescope read from the capture.
        public var packetsCaptured: Int
        /// What libpcap's `pcap_stats` says the kernel received (on Linux loopback each
        /// packet is seen twice, once outgoing, which libpcap discards).
        public var packetsReceived: Int
        public var kernelDrops: Int
        public var interfaceDrops: Int
        public var durationSeconds: Double
        public var savedTo: String?

        public init(
            interface: String, filter: String?, packetsCaptured: Int, packetsReceived: Int, kernelDrops: Int, interfaceDrops: Int,
            durationSeconds: Double, savedTo: String?
        ) {
            self.interface = interface
            self.filter = filter
            self.packetsCaptured = packetsCaptured
            self.packetsReceived = packetsReceived
            self.kernelDrops = kernelDrops
            self.interfaceDrops = interfaceDrops
            self.durationSeconds = durationSeconds
            self.savedTo = savedTo
        }
    }

    public struct Protobuf: Sendable {
        /// `wire` (well-formed protobuf wire data) or `schema` (parses as `message`).
        public var mode: String
        public var message: String?
        public var countBy: String?
        /// `varint` (only varint-delimited connections) or `length-framed` (all length-field ones).
        public var scope: String
    }

    /// Bodies checked as protobuf in a direction (or summed).
    public struct ProtobufFigures: Sendable {
        public var checked: Int
        public var invalid: Int
        public var invalidPercent: Double
        public var invalidByReason: [String: Int]
        /// Valid bodies by the count field's value (enum names where the schema has them).
        public var counts: [String: Int]?
    }

    public struct Dissectors: Sendable {
        /// The SPEC every connection without a per-port one uses (reusable on the command line).
        public var `default`: String?
        /// Its preset or protocol-file name, or the SPEC again.
        public var defaultName: String?
        public var byServerPort: [String: String]
    }

    public struct Totals: Sendable {
        public var connections: Int
        public var dissectedConnections: Int
        /// Connections counted in the totals but not listed (long live captures keep only the
        /// most recent ones).
        public var foldedConnections: Int
        public var clientToServer: Figures
        public var serverToClient: Figures
        public var all: Figures
    }

    public struct Connection: Sendable {
        public var id: Int
        public var client: String
        public var server: String
        /// The SPEC (or preset/protocol name) used; null when no dissector applied.
        public var dissector: String?
        public var start: String
        public var end: String
        /// Epoch seconds of the connection's first and last packet.
        public var firstTime: String
        public var lastTime: String
        public var directions: [DirectionReport]
    }

    public struct DirectionReport: Sendable {
        public var from: String
        public var to: String
        public var bytes: Int64
        public var gapBytes: Int64
        public var figures: Figures
        // The headline figures again at this level, as the schema promises.
        public var segments: Int
        public var messages: Int
        public var partialMessages: Int
        public var mergedSegments: Int
        public var naiveReaderLoss: Int
        public var malformed: Int
        public var incompleteAtEnd: Int
        public var messageTypes: [String: Int]?
        /// Partial, merged and malformed over time; nil when the direction had none.
        public var timeline: Timeline?
    }

    public struct Timeline: Sendable {
        /// Epoch seconds where the first bucket starts (the first event).
        public var origin: String
        public var bucketSeconds: Double
        public var partial: [Int]
        public var merged: [Int]
        public var malformed: [Int]
    }

    /// Everything measured for a direction, or summed over several.
    public struct Figures: Sendable {
        public var segments: Int
        public var messages: Int
        public var messageBytes: Int64
        public var messageSize: Distribution
        /// `[lower, messages]` pairs: messages of `lower` to `2 × lower - 1` bytes.
        public var messageSizeBins: [[Int64]]
        public var partialMessages: Int
        public var partialPercent: Double
        /// `[segments, messages]` pairs; the last bucket (63) stands for 63 and more.
        public var segmentsPerMessage: [[Int]]
        public var maxSegmentsPerMessage: Int
        public var mergedSegments: Int
        public var mergedPercent: Double
        /// `[messages, segments]` pairs.
        public var messagesPerSegment: [[Int]]
        public var maxMessagesPerSegment: Int
        public var naiveReaderLoss: Int
        public var naiveReaderLossPercent: Double
        public var malformed: Int
        public var malformedByReason: [String: Int]
        public var incompleteAtEnd: Int
        public var incompleteBytes: Int64
        public var damagedByGaps: Int
        public var undissectedBytes: Int64
        public var preambleBytes: Int64
        public var resyncs: Int
        public var stopped: Bool
        /// Seconds from a message's first to its last segment.
        public var assemblyLatency: Distribution
        public var segmentsOverMSS: Int
        /// Only when bodies were checked as protobuf.
        public var protobuf: ProtobufFigures?
    }

    public struct Distribution: Sendable {
        public var min: Double
        public var p50: Double
        public var p99: Double
        public var max: Double
    }

    public struct Event: Sendable {
        public var kind: String
        public var reason: String?
        public var connection: Int
        public var from: String
        public var to: String
        public var offset: Int64
        public var frame: UInt64
        public var time: String
        /// Up to 16 bytes at `offset` (the JSON has them in hex).
        public var bytes: [UInt8]
        public var length: Int64
        /// A Wireshark display filter showing the frame.
        public var wiresharkFilter: String
        /// `invalid-protobuf` only: the stream offset of the byte the body stopped parsing at, and its frame.
        public var failedAt: Int64?
        public var failedInFrame: UInt64?
    }
}

extension AnalysisReport {
    public init(analyzer: Analyzer, flows: FlowsReport, choice: DissectorChoice) {
        inputs = flows.inputs
        packets = flows.packets
        limits = flows.limits
        dissectors = Dissectors(
            default: choice.byDefault?.text, defaultName: choice.byDefault?.name,
            byServerPort: Dictionary(uniqueKeysWithValues: choice.byServerPort.map { (String($0.key), $0.value.text) }))
        let analyses = analyzer.sortedConnections
        self.analyses = analyses
        protobufCheck = analyzer.protobuf
        totals = Self.totals(analyzer: analyzer, connections: analyses)
        let endpoints = Dictionary(uniqueKeysWithValues: analyses.map { ($0.summary.info.id, ($0.summary.info.client, $0.summary.info.server)) })
        events = analyzer.context.evidence.events.map { Event($0, endpoints: endpoints[$0.connection]) }
        eventsTotal = analyzer.context.evidence.total
        warnings = Self.warnings(analyzer: analyzer, analyses: analyses, limits: flows.limits, inputs: flows.inputs)
    }

    /// Per direction and in all, over `connections` and the folded ones, as every format shows
    /// them (the live view adds the connections still open); quantiles come from the fine
    /// histograms kept across all connections.
    public static func totals(analyzer: Analyzer, connections: [ConnectionAnalysis]) -> Totals {
        var perDirection = analyzer.folded
        for a in connections {
            guard let directions = a.directions else { continue }
            for d in Direction.allCases { perDirection[d].merge(directions[d]) }
        }
        for d in Direction.allCases {
            perDirection[d].sizes = analyzer.context.sizes[d]
            perDirection[d].assemblyLatencyMicroseconds = analyzer.context.latencies[d]
        }
        var all = perDirection.clientToServer
        all.merge(perDirection.serverToClient)
        let check = analyzer.protobuf
        return Totals(
            connections: connections.count + analyzer.foldedConnections,
            dissectedConnections: connections.filter { $0.spec != nil }.count + analyzer.foldedConnections,
            foldedConnections: analyzer.foldedConnections,
            clientToServer: Figures(perDirection.clientToServer, protobuf: check),
            serverToClient: Figures(perDirection.serverToClient, protobuf: check), all: Figures(all, protobuf: check))
    }

    /// Adds a live capture's figures; drops go first among the warnings, because drops turn into gaps.
    public mutating func setCapture(_ capture: Capture) {
        self.capture = capture
        let drops = capture.kernelDrops + capture.interfaceDrops
        if drops > 0 {
            warnings.insert(
                "the capture dropped \(drops) packets (kernel \(capture.kernelDrops), interface \(capture.interfaceDrops)): "
                    + "they show up as gaps and damaged messages; a larger --buffer-size or a narrower --filter helps", at: 0)
        }
    }

    private static func warnings(
        analyzer: Analyzer, analyses: [ConnectionAnalysis], limits: FlowsReport.Limits, inputs: [FlowsReport.Input]
    ) -> [String] {
        var out: [String] = []
        for input in inputs where input.error != nil { out.append("input broken: \(input.error!)") }
        let over = analyses.reduce(0) { $0 + $1.summary[.clientToServer].segmentsOverMSS + $1.summary[.serverToClient].segmentsOverMSS }
        if over > 0 {
            out.append(
                "\(over) segments are larger than the MSS their receiver announced: the capture was taken with segmentation "
                    + "offload (TSO/GRO) on, so partial/merged figures describe the capturing host's buffers, not the wire")
        }
        if limits.bufferLimitGaps + limits.connectionLimitEvictions > 0 {
            out.append("memory limits were reached (\(limits.bufferLimitGaps) holes skipped early, \(limits.connectionLimitEvictions) connections finalized early): figures are degraded there")
        }
        if analyzer.context.recoveryBudget.exhausted > 0 {
            out.append("\(analyzer.context.recoveryBudget.exhausted) directions gave up resynchronising because all resync windows together reached their limit")
        }
        if analyzer.foldedConnections > 0 {
            out.append("\(analyzer.foldedConnections) connections are counted in the totals but not listed (--max-listed-connections)")
        }
        if !analyses.isEmpty && analyses.allSatisfy({ $0.spec == nil }) {
            out.append("no connection matched a dissector: give --dissector SPEC, or PORT=SPEC for the server port")
        }
        return out
    }
}

extension AnalysisReport.Connection {
    init(_ a: ConnectionAnalysis, protobuf: ProtobufCheck?) {
        let info = a.summary.info
        id = info.id.rawValue
        client = info.client.description
        server = info.server.description
        dissector = a.spec?.name
        start = a.summary.synSeen ? "syn" : "mid-stream"
        end = a.summary.end.rawValue
        firstTime = info.firstSeen.epochString
        lastTime = a.summary.lastSeen.epochString
        directions = Direction.allCases.map { d in
            let (from, to) = d == .clientToServer ? (info.client, info.server) : (info.server, info.client)
            let stats = a.summary[d]
            let analysis = a.directions?[d] ?? DirectionAnalysis()
            let figures = AnalysisReport.Figures(analysis, segments: stats.segments, protobuf: protobuf)
            var types: [String: Int]?
            if let spec = a.spec, spec.hasTypeField {
                types = Dictionary(uniqueKeysWithValues: analysis.types.map { (typeLabel($0.key, names: spec.typeNames), $0.value) })
            }
            return AnalysisReport.DirectionReport(
                from: from.description, to: to.description, bytes: stats.bytes, gapBytes: stats.gapBytes, figures: figures,
                segments: stats.segments, messages: figures.messages, partialMessages: figures.partialMessages,
                mergedSegments: figures.mergedSegments, naiveReaderLoss: figures.naiveReaderLoss, malformed: figures.malformed,
                incompleteAtEnd: figures.incompleteAtEnd, messageTypes: types,
                timeline: analysis.timeline.isEmpty ? nil : AnalysisReport.Timeline(analysis.timeline))
        }
    }
}

/// A type value as text: its name from the protocol file; ASCII when it is two or more
/// printable bytes (a type field of digits or letters, like the V0.1 header's); else decimal.
func typeLabel(_ value: UInt64, names: [UInt64: String]) -> String {
    if let name = names[value] { return name }
    let bytes = (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64($0))) }.drop { $0 == 0 }
    if bytes.count >= 2 && bytes.allSatisfy({ (0x20...0x7E).contains($0) }) {
        return "\"" + String(decoding: bytes, as: UTF8.self) + "\""
    }
    return String(value)
}

extension AnalysisReport.Figures {
    init(_ a: DirectionAnalysis, segments: Int? = nil, protobuf check: ProtobufCheck? = nil) {
        let segs = segments ?? a.segments
        self.segments = segs
        messages = a.messages
        messageBytes = a.messageBytes
        messageSize = .init(sizes: a.sizes)
        messageSizeBins = a.sizes.powerOfTwoBins.map { [$0.lower, Int64($0.count)] }
        partialMessages = a.partialMessages
        partialPercent = percent(a.partialMessages, of: a.messages)
        segmentsPerMessage = a.segmentsPerMessage.nonZero.map { [$0.value, $0.count] }
        maxSegmentsPerMessage = a.segmentsPerMessage.maximum
        mergedSegments = a.mergedSegments
        mergedPercent = percent(a.mergedSegments, of: segs)
        messagesPerSegment = a.messagesPerSegment.nonZero.map { [$0.value, $0.count] }
        maxMessagesPerSegment = a.messagesPerSegment.maximum
        naiveReaderLoss = a.naiveReaderLoss
        naiveReaderLossPercent = percent(a.naiveReaderLoss, of: a.messages)
        malformed = a.malformed
        malformedByReason = Dictionary(uniqueKeysWithValues: a.malformedByReason.map { ($0.key.rawValue, $0.value) })
        incompleteAtEnd = a.incompleteAtEnd
        incompleteBytes = a.incompleteBytes
        damagedByGaps = a.damagedByGaps
        undissectedBytes = a.undissectedBytes
        preambleBytes = a.preambleBytes
        resyncs = a.resyncs
        stopped = a.stopped
        assemblyLatency = .init(microseconds: a.assemblyLatencyMicroseconds)
        segmentsOverMSS = a.segmentsOverMSS
        protobuf = check.map { check in
            AnalysisReport.ProtobufFigures(
                checked: a.protobufChecked, invalid: a.protobufInvalid, invalidPercent: percent(a.protobufInvalid, of: a.protobufChecked),
                invalidByReason: Dictionary(uniqueKeysWithValues: a.protobufInvalidByReason.map { ($0.key.rawValue, $0.value) }),
                counts: check.schema.flatMap { schema in
                    schema.countBy == nil
                        ? nil : Dictionary(a.protobufCounts.map { (schema.countLabel($0.key), $0.value) }, uniquingKeysWith: +)
                })
        }
    }
}

extension AnalysisReport.Timeline {
    init(_ t: EventTimeline) {
        origin = t.origin.epochString
        bucketSeconds = Double(t.bucketNanoseconds) / 1e9
        partial = t.series(.partial)
        merged = t.series(.merged)
        malformed = t.series(.malformed)
    }
}

extension AnalysisReport.Distribution {
    init(sizes h: QuantileHistogram) {
        self.init(
            min: h.count == 0 ? 0 : Double(h.minimum), p50: Double(h.quantile(0.5)), p99: Double(h.quantile(0.99)), max: Double(h.maximum))
    }

    init(microseconds h: QuantileHistogram) {
        func s(_ v: Int64) -> Double { Double(v) / 1e6 }
        self.init(min: h.count == 0 ? 0 : s(h.minimum), p50: s(h.quantile(0.5)), p99: s(h.quantile(0.99)), max: s(h.maximum))
    }
}

extension AnalysisReport.Event {
    init(_ e: AnalysisEvent, endpoints: (Endpoint, Endpoint)?) {
        let (client, server) = endpoints ?? (Endpoint(address: IPAddress(ipv4: 0), port: 0), Endpoint(address: IPAddress(ipv4: 0), port: 0))
        let (from, to) = e.direction == .clientToServer ? (client, server) : (server, client)
        kind = e.kind.rawValue
        reason = e.reason?.rawValue ?? e.protobufFailure?.reason.rawValue
        failedAt = e.protobufFailure?.offset
        failedInFrame = e.protobufFailure?.frame
        connection = e.connection.rawValue
        self.from = from.description
        self.to = to.description
        offset = e.offset
        frame = e.frame
        time = e.timestamp.epochString
        bytes = e.bytes
        length = e.length
        wiresharkFilter = "tcp.stream == \(e.connection.rawValue) && frame.number == \(e.frame)"
    }
}

/// Percentage with one decimal.
public func percent(_ part: Int, of whole: Int) -> Double {
    whole == 0 ? 0 : (Double(part) * 1000 / Double(whole)).rounded() / 10
}

/// Lower-case hex, bytes separated by spaces.
func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    return bytes.map { String([digits[Int($0 >> 4)], digits[Int($0 & 15)]]) }.joined(separator: " ")
}

extension ConnectionAnalysis {
    /// Both directions together.
    public var combined: AnalysisReport.Figures {
        var all = directions?.clientToServer ?? DirectionAnalysis()
        if let directions { all.merge(directions.serverToClient) }
        return AnalysisReport.Figures(all)
    }
}
