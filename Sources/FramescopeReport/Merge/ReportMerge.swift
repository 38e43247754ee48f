import FramescopeCore

/// `framescope merge`: the JSON reports of a capture's shards (`split --by-flow`, analyzed
/// anywhere) combined into the report of one run over the whole capture. Connections get the IDs
/// that run gives (the order of their first frames, which a shard keeps from the original
/// capture); counts add up; distributions come from the shards' histograms (`sketches`), not
/// their percentiles.
public enum ReportMerge {
    public static let maxReports = 4096

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The merged report; fails on a report that is not `framescope.report/4` JSON with
    /// sketches, or that cannot be combined with the others (another dissector, a live capture,
    /// inferred framing, connections left out of the listing).
    public static func merge(_ paths: [String]) throws -> AnalysisReport {
        guard !paths.isEmpty else { throw Failure(description: "no report to merge") }
        guard paths.count <= maxReports else { throw Failure(description: "at most \(maxReports) reports (split makes at most as many shards)") }
        let shards = try paths.map(Shard.init)
        let first = shards[0]
        for shard in shards.dropFirst() {
            for key in ["dissectors", "protobuf"] where shard.text(key) != first.text(key) {
                throw shard.failure("its \(key) differ from \(first.document.path)'s: merge reports of one capture analyzed alike")
            }
        }
        let connections = try MergedConnections(shards)
        var events: [(id: Int, order: Int, item: AnalysisReport.Event)] = []
        var examples: [(id: Int, order: Int, item: (AnalysisReport.Example, fromClient: Bool))] = []
        var suggestions: [(id: Int, order: Int, item: AnalysisReport.SpecSuggestion)] = []
        var eventsTotal = 0
        var inputs: [FlowsReport.Input] = []
        var packets: FlowsReport.Packets?, limits: FlowsReport.Limits?, sketches: AnalysisReport.Sketches?
        var totals: AnalysisReport.Totals?, tcp: AnalysisReport.TCPContext?, responseTimes: ResponseTimesCounts?
        for (index, shard) in shards.enumerated() {
            let renumber = Renumbering(connections.newIDs[index], labels: connections.labels[index], byAddress: shard.byAddress)
            for (k, e) in try shard.list("events", AnalysisReport.Event.init).enumerated() {
                let id = try renumber.id(e.connection, shard)
                events.append((id, k, e.renumbered(id, renumber)))
            }
            for (k, e) in try shard.list("examples", AnalysisReport.Example.init).enumerated() {
                let id = try renumber.id(e.connection, shard)
                examples.append((id, k, (e.renumbered(id, renumber), renumber.labels[e.connection]?.client == e.from)))
            }
            for (k, s) in try shard.list("specSuggestions", AnalysisReport.SpecSuggestion.init).enumerated() {
                var s = s
                s.connection = try renumber.id(s.connection, shard)
                suggestions.append((s.connection, k, s))
            }
            eventsTotal += try shard.fields.int("eventsTotal")
            inputs += try shard.list("inputs", FlowsReport.Input.init)
            packets = packets.adding(try FlowsReport.Packets(try shard.fields.object("packets")))
            limits = limits.adding(try FlowsReport.Limits(try shard.fields.object("limits")))
            totals = totals.adding(try AnalysisReport.Totals(counts: try shard.fields.object("totals")))
            if let t = try shard.fields.optionalObject("tcp") { tcp = tcp.adding(try AnalysisReport.TCPContext(counts: t)) }
            if let r = try shard.fields.optionalObject("responseTimes") { responseTimes = responseTimes.adding(try ResponseTimesCounts(r)) }
            let sketch = try AnalysisReport.Sketches(try shard.fields.object("sketches"))
            if let first = sketches, first.recutMSS != sketch.recutMSS {
                throw shard.failure("analyzed with --mss \(sketch.recutMSS), the reports before it with \(first.recutMSS) (0: without): analyze every shard alike")
            }
            if sketches == nil { sketches = sketch } else { sketches!.merge(sketch) }
        }
        guard var totals, let sketches, let packets, let limits else { throw Failure(description: "no report to merge") }
        totals.recompute(sketches)
        var report = AnalysisReport(
            merged: connections, inputs: inputs, packets: packets, limits: limits, totals: totals,
            dissectors: try AnalysisReport.Dissectors(try first.fields.object("dissectors")),
            protobuf: try first.fields.optionalObject("protobuf").map(AnalysisReport.Protobuf.init))
        report.events = Array(byConnection(events).prefix(EvidenceRecorder.limit))
        report.eventsTotal = eventsTotal
        report.examples = selectExamples(byConnection(examples))
        report.specSuggestions = byConnection(suggestions)
        report.tcp = tcp.map { $0.context(sketches) }
        report.responseTimes = responseTimes.map { $0.report(sketches) }
        report.sketches = sketches
        report.warnings = AnalysisReport.warnings(sketches, totals: totals, limits: limits, inputs: inputs, packets: packets)
        return report
    }

    /// By (new) connection ID, each shard's own order within a connection.
    private static func byConnection<T>(_ items: [(id: Int, order: Int, item: T)]) -> [T] {
        items.sorted { ($0.id, $0.order) < ($1.id, $1.order) }.map(\.item)
    }

    /// A run's rule (`EvidenceRecorder`), over the shards' examples by (connection, order found):
    /// the lowest three of each kind per direction, and the lowest of each cause.
    private static func selectExamples(_ all: [(AnalysisReport.Example, fromClient: Bool)]) -> [AnalysisReport.Example] {
        var kept: [AnalysisReport.Example] = [], perKind: [String: Int] = [:], causes: Set<String> = []
        for (e, fromClient) in all {
            let kind = "\(e.kind) \(fromClient)", cause = "\(kind) \(e.cause)"
            guard perKind[kind, default: 0] < EvidenceRecorder.examplesPerKind || !causes.contains(cause) else { continue }
            kept.append(e)
            perKind[kind, default: 0] += 1
            causes.insert(cause)
        }
        return kept
    }
}

/// One report to merge: its top-level members (but the connections) read, and where each is.
private struct Shard {
    let document: JSONDocument
    let rootRanges: [String: Range<Int>]
    let fields: ReportFields
    /// Its frames are an original capture's (a shard of `split`): its filters name connections by address.
    let byAddress: Bool

    init(path: String) throws {
        document = try JSONDocument(path: path)
        let members = try document.rootMembers()
        var ranges: [String: Range<Int>] = [:]
        var read: [(key: String, value: JSONNode)] = []
        for (key, range) in members {
            ranges[key] = range
            if key != "connections" { read.append((key, try document.value(at: range.lowerBound))) }
        }
        rootRanges = ranges
        let fail = { [path] (message: String) -> Error in ReportMerge.Failure(description: "\(path): \(message)") }
        fields = try ReportFields(.object(read), "report", fail: fail)
        let root = fields.value
        guard let schema = root["schema"]?.string, schema.hasPrefix("framescope.report/") else {
            throw fail("not a framescope.report/4 JSON report (analyze --format json)")
        }
        // (Another version's connections say other things: merged with this one's, the lines would differ.)
        guard schema == "framescope.report/4" else { throw fail("\(schema), another framescope's version of the report: analyze the shard again with this one") }
        if root["capture"] != nil { throw fail("a live capture's report: merge combines the reports of a capture file's shards") }
        if let inferred = root["inference"]?.elements, !inferred.isEmpty {
            throw fail("analyzed with --dissector auto, which can infer another framing in each shard: infer once (framescope infer) and give every shard the SPEC it names")
        }
        guard root["sketches"] != nil else { throw fail("has no sketches (made by an older framescope): analyze the shard again") }
        let folded = try fields.object("totals").int("foldedConnections")
        guard folded == 0 else { throw fail("lists \(folded) connections fewer than it counts: analyze the shards with --connections all (the default)") }
        byAddress = try fields.array("inputs").contains { $0["frameIndex"] != nil }
    }

    func failure(_ message: String) -> ReportMerge.Failure { ReportMerge.Failure(description: "\(document.path): \(message)") }

    /// The connections its events, examples and SPEC suggestions name.
    func namedConnections() throws -> Set<Int> {
        var ids = Set<Int>()
        for key in ["events", "examples", "specSuggestions"] {
            for (index, v) in try fields.array(key).enumerated() { ids.insert(try fields.element(v, index, of: key).int("connection")) }
        }
        return ids
    }

    /// A top-level member's text as written, nil when absent (to compare reports' settings).
    func text(_ key: String) -> String? { rootRanges[key].map(document.text) }

    func list<T>(_ key: String, _ make: (ReportFields) throws -> T) throws -> [T] {
        try fields.array(key).enumerated().map { try make(try fields.element($1, $0, of: key)) }
    }
}

/// Every shard's connections in the order of their first frames (the order a run over the whole
/// capture numbers them in), each copied through as its shard wrote it with the new ID.
struct MergedConnections: @unchecked Sendable {
    private let documents: [JSONDocument]
    private let entries: [(shard: Int, line: Range<Int>, id: Range<Int>)]
    /// Per shard, old ID → new.
    fileprivate let newIDs: [[Int: Int]]
    /// Per shard, old ID → client and server as written, of the connections its events,
    /// examples and suggestions name (their filters name them).
    fileprivate let labels: [[Int: (client: String, server: String)]]

    fileprivate init(_ shards: [Shard]) throws {
        var all: [(firstFrame: UInt64, shard: Int, old: Int, line: Range<Int>, id: Range<Int>)] = []
        var labels: [[Int: (client: String, server: String)]] = []
        for (index, shard) in shards.enumerated() {
            var named: [Int: (client: String, server: String)] = [:]
            guard let range = shard.rootRanges["connections"] else { throw shard.failure("has no connections") }
            let wanted = try shard.namedConnections()
            var seen = Set<Int>()
            try shard.document.forEachObject(inArrayAt: range.lowerBound) { line, members in
                func text(_ key: String) throws -> String {
                    guard let r = members.first(where: { $0.key == key })?.range else { throw shard.failure("a connection at byte \(line.lowerBound) has no \(key)") }
                    return shard.document.text(r)
                }
                guard let idRange = members.first(where: { $0.key == "id" })?.range, let old = Int(try text("id")),
                    let firstFrame = UInt64(try text("firstFrame"))
                else { throw shard.failure("a connection at byte \(line.lowerBound) has no integer id or firstFrame") }
                guard seen.insert(old).inserted else { throw shard.failure("lists connection \(old) twice") }
                if wanted.contains(old) { named[old] = (try unquote(text("client")), try unquote(text("server"))) }
                all.append((firstFrame, index, old, line, idRange))
            }
            labels.append(named)
        }
        all.sort { ($0.firstFrame, $0.shard, $0.old) < ($1.firstFrame, $1.shard, $1.old) }
        var newIDs = [[Int: Int]](repeating: [:], count: shards.count)
        for (new, e) in all.enumerated() { newIDs[e.shard][e.old] = new }
        (documents, entries, self.newIDs, self.labels) = (shards.map(\.document), all.map { ($0.shard, $0.line, $0.id) }, newIDs, labels)
    }

    func write(to w: inout JSONWriter) {
        var line: [UInt8] = []
        for (new, e) in entries.enumerated() {
            let bytes = documents[e.shard].bytes
            line.removeAll(keepingCapacity: true)
            line.append(contentsOf: bytes[e.line.lowerBound..<e.id.lowerBound])
            line.append(contentsOf: String(new).utf8)
            line.append(contentsOf: bytes[e.id.upperBound..<e.line.upperBound])
            line.withUnsafeBytes { w.encodedMember($0) }
        }
    }
}

/// An endpoint as a connection line writes it: `"10.0.0.1:80"` (no escapes in an address).
private func unquote(_ text: String) throws -> String {
    guard text.count >= 2, text.first == "\"", text.last == "\"" else { throw ReportMerge.Failure(description: "an endpoint is not a string: \(text)") }
    return String(text.dropFirst().dropLast())
}

/// A shard's connection IDs as the merged report numbers them, and its Wireshark filters with them.
private struct Renumbering {
    let newIDs: [Int: Int]
    let labels: [Int: (client: String, server: String)]
    let byAddress: Bool

    init(_ newIDs: [Int: Int], labels: [Int: (client: String, server: String)], byAddress: Bool) {
        (self.newIDs, self.labels, self.byAddress) = (newIDs, labels, byAddress)
    }

    func id(_ old: Int, _ shard: Shard) throws -> Int {
        guard let new = newIDs[old] else { throw shard.failure("names connection \(old), which it does not list") }
        return new
    }

    /// The filter with the new connection's name in front: `tcp.stream == N` (the merged IDs are
    /// the capture's stream numbers) instead of the shard's own.
    func filter(_ filter: String, old: Int, new: Int) -> String {
        let label = labels[old]
        for shardName in [connectionFilter(old, client: label?.client, server: label?.server, byAddress: byAddress), "tcp.stream == \(old)"]
        where filter.hasPrefix(shardName + " ") || filter == shardName {
            return connectionFilter(new, client: nil, server: nil, byAddress: false) + filter.dropFirst(shardName.count)
        }
        return filter
    }
}

/// Evidence that names a connection, and shows it with a Wireshark filter that starts with
/// the connection's.
private protocol NamesAConnection {
    var connection: Int { get set }
    var filterNamingConnection: String { get set }
}

extension NamesAConnection {
    /// With the merged report's ID, and its filter naming that.
    func renumbered(_ id: Int, _ r: Renumbering) -> Self {
        var e = self
        (e.connection, e.filterNamingConnection) = (id, r.filter(filterNamingConnection, old: connection, new: id))
        return e
    }
}

extension AnalysisReport.Event: NamesAConnection {
    fileprivate var filterNamingConnection: String {
        get { connectionFilter }
        set { connectionFilter = newValue }
    }
}

extension AnalysisReport.Example: NamesAConnection {
    fileprivate var filterNamingConnection: String {
        get { wiresharkFilter }
        set { wiresharkFilter = newValue }
    }
}

extension AnalysisReport.Event {
    init(_ f: ReportFields) throws {
        let frame = try f.uint64("frame"), filter = try f.string("wiresharkFilter"), time = try f.string("time")
        let frameFilter = " && frame.number == \(frame)"
        guard filter.hasSuffix(frameFilter) else { throw f.fail("\(f.path).wiresharkFilter does not end with its frame's `\(frameFilter.dropFirst())`") }
        guard let timestamp = Timestamp(epochText: time) else { throw f.fail("\(f.path).time is not seconds.nanoseconds (\(time))") }
        self.init(
            kind: try f.string("kind"), reason: try f.optionalString("reason"), connection: try f.int("connection"), from: try f.string("from"),
            to: try f.string("to"), offset: try f.int64("offset"), frame: frame, timestamp: timestamp,
            bytes: try unhex(try f.string("bytes"), f), length: try f.int64("length"), connectionFilter: String(filter.dropLast(frameFilter.count)),
            failedAt: f.value["failedAt"] == nil ? nil : try f.int64("failedAt"),
            failedInFrame: f.value["failedInFrame"] == nil ? nil : try f.uint64("failedInFrame"),
            evidenceBits: try f.optionalDouble("evidenceBits"), looksLike: try f.optionalString("looksLike"))
    }
}

/// `hex`'s text back: bytes as two hex digits each, a space between.
private func unhex(_ text: String, _ f: ReportFields) throws -> [UInt8] {
    try text.split(separator: " ", omittingEmptySubsequences: false).filter { !text.isEmpty || !$0.isEmpty }.map { pair in
        guard pair.utf8.count == 2, let byte = UInt8(pair, radix: 16) else { throw f.fail("\(f.path).bytes is not hex bytes") }
        return byte
    }
}

extension AnalysisReport.Example {
    init(_ f: ReportFields) throws {
        self.init(
            kind: try f.string("kind"), connection: try f.int("connection"), from: try f.string("from"), to: try f.string("to"),
            offset: try f.int64("offset"), length: try f.int64("length"), firstFrame: try f.uint64("firstFrame"), lastFrame: try f.uint64("lastFrame"),
            count: try f.int("count"), cause: try f.string("cause"), time: try f.string("time"), wiresharkFilter: try f.string("wiresharkFilter"))
    }
}

extension AnalysisReport.SpecSuggestion {
    init(_ f: ReportFields) throws {
        connection = try f.int("connection")
        from = try f.string("from")
        to = try f.string("to")
        change = try f.string("change")
        spec = try f.string("spec")
        meaning = try f.optionalString("meaning")
        messages = try f.int("messages")
        bytes = try f.int("bytes")
        wholeStream = try f.bool("wholeStream")
    }
}

extension FlowsReport.Input {
    init(_ f: ReportFields) throws {
        self.init(
            path: try f.string("path"), packets: try f.int("packets"), firstFrame: try f.uint64("firstFrame"), reader: try f.string("reader"),
            error: try f.optionalString("error"), timeZone: try f.optionalString("timeZone"), frameIndex: try f.optionalString("frameIndex"))
    }
}

extension FlowsReport.Packets {
    init(_ f: ReportFields) throws {
        self.init(
            total: try f.int("total"), tcp: try f.int("tcp"), cutBySnaplen: try f.int("cutBySnaplen"),
            bytesCutBySnaplen: try f.int64("bytesCutBySnaplen"), skipped: try f.counts("skipped"))
    }
}

extension FlowsReport.Limits {
    init(_ f: ReportFields) throws {
        self.init(
            peakBufferedBytes: try f.int("peakBufferedBytes"), bufferLimitGaps: try f.int("bufferLimitGaps"), lateBytes: try f.int64("lateBytes"),
            globalLimitEvictions: try f.int("globalLimitEvictions"), connectionLimitEvictions: try f.int("connectionLimitEvictions"),
            closedLimitFinalized: try f.int("closedLimitFinalized"), directionsWithoutConflictCheck: try f.int("directionsWithoutConflictCheck"))
    }
}

extension AnalysisReport.Dissectors {
    init(_ f: ReportFields) throws {
        let ports = try f.object("byServerPort")
        var byServerPort: [String: String] = [:]
        for (port, _) in ports.value.members ?? [] { byServerPort[port] = try ports.string(port) }
        self.init(default: try f.optionalString("default"), defaultName: try f.optionalString("defaultName"), byServerPort: byServerPort)
    }
}

extension AnalysisReport.Protobuf {
    init(_ f: ReportFields) throws {
        self.init(mode: try f.string("mode"), message: try f.optionalString("message"), countBy: try f.optionalString("countBy"), scope: try f.string("scope"))
    }
}

extension AnalysisReport.Totals {
    init(counts f: ReportFields) throws {
        self.init(
            connections: try f.int("connections"), dissectedConnections: try f.int("dissectedConnections"), foldedConnections: 0,
            undissectedConnectionBytes: 0, clientToServer: try .init(counts: try f.object("clientToServer")),
            serverToClient: try .init(counts: try f.object("serverToClient")), all: try .init(counts: try f.object("all")))
    }

    mutating func add(_ o: Self) {
        connections += o.connections
        dissectedConnections += o.dissectedConnections
        clientToServer.add(o.clientToServer)
        serverToClient.add(o.serverToClient)
        all.add(o.all)
    }

    /// Distributions, bins and percentages from the merged counts and histograms.
    mutating func recompute(_ s: AnalysisReport.Sketches) {
        clientToServer.recompute(
            sizes: s.messageSize.clientToServer, latency: s.assemblyLatency.clientToServer, latencyByType: s.assemblyLatencyByType?.clientToServer)
        serverToClient.recompute(
            sizes: s.messageSize.serverToClient, latency: s.assemblyLatency.serverToClient, latencyByType: s.assemblyLatencyByType?.serverToClient)
        var sizes = s.messageSize.clientToServer, latency = s.assemblyLatency.clientToServer
        sizes.merge(s.messageSize.serverToClient)
        latency.merge(s.assemblyLatency.serverToClient)
        all.recompute(sizes: sizes, latency: latency, latencyByType: nil)
    }
}

extension AnalysisReport.TCPContext {
    /// The counts; the round trips come from the sketches (`context`).
    init(counts f: ReportFields) throws {
        func direction(_ key: String) throws -> AnalysisReport.TCPDirection {
            let d = try f.object(key)
            return AnalysisReport.TCPDirection(
                ackRTT: .init(min: 0, p50: 0, p99: 0, max: 0), ackRTTSamples: 0, retransmissions: try d.int("retransmissions"),
                duplicateAcks: try d.int("duplicateAcks"), zeroWindows: try d.int("zeroWindows"), windowFull: try d.int("windowFull"),
                outOfOrder: try d.int("outOfOrder"))
        }
        initialRTT = .init(min: 0, p50: 0, p99: 0, max: 0)
        handshakes = 0
        clientToServer = try direction("clientToServer")
        serverToClient = try direction("serverToClient")
        gapBytes = try f.int64("gapBytes")
        initialRTTHistogram = QuantileHistogram(bits: 6)
        ackRTTHistograms = PerDirection { _ in QuantileHistogram(bits: 6) }
    }

    mutating func add(_ o: Self) {
        for path in [\AnalysisReport.TCPContext.clientToServer, \.serverToClient] {
            self[keyPath: path].retransmissions += o[keyPath: path].retransmissions
            self[keyPath: path].duplicateAcks += o[keyPath: path].duplicateAcks
            self[keyPath: path].zeroWindows += o[keyPath: path].zeroWindows
            self[keyPath: path].windowFull += o[keyPath: path].windowFull
            self[keyPath: path].outOfOrder += o[keyPath: path].outOfOrder
        }
        gapBytes += o.gapBytes
    }

    func context(_ s: AnalysisReport.Sketches) -> Self {
        var c = self
        (c.initialRTTHistogram, c.ackRTTHistograms) = (s.initialRTT, s.ackRTT)
        c.initialRTT = .init(microseconds: s.initialRTT)
        c.handshakes = s.initialRTT.count
        for (path, h) in [(\AnalysisReport.TCPContext.clientToServer, s.ackRTT.clientToServer), (\.serverToClient, s.ackRTT.serverToClient)] {
            c[keyPath: path].ackRTT = .init(microseconds: h)
            c[keyPath: path].ackRTTSamples = h.count
        }
        return c
    }
}

/// A report's response-time counts; the times come from the sketches.
private struct ResponseTimesCounts {
    var paired: Int, unpaired: Int, unanswered: Int, abandoned: Int

    init(_ f: ReportFields) throws {
        (paired, unpaired, unanswered, abandoned) = (try f.int("paired"), try f.int("unpaired"), try f.int("unanswered"), try f.int("abandoned"))
    }

    mutating func add(_ o: Self) {
        (paired, unpaired, unanswered, abandoned) = (paired + o.paired, unpaired + o.unpaired, unanswered + o.unanswered, abandoned + o.abandoned)
    }

    func report(_ s: AnalysisReport.Sketches) -> AnalysisReport.ResponseTimesReport {
        AnalysisReport.ResponseTimesReport(
            requestResponse: ResponseTimes.looksLikeRequestResponse(paired: paired, unpaired: unpaired, unanswered: unanswered, abandoned: abandoned),
            paired: paired, unpaired: unpaired, unanswered: unanswered, abandoned: abandoned, byLabel: s.responseTimes)
    }
}

extension FlowsReport.Packets {
    mutating func add(_ o: Self) {
        (total, tcp, cutBySnaplen, bytesCutBySnaplen) = (total + o.total, tcp + o.tcp, cutBySnaplen + o.cutBySnaplen, bytesCutBySnaplen + o.bytesCutBySnaplen)
        skipped = adding(skipped, o.skipped)
    }
}

extension FlowsReport.Limits {
    /// Summed, but the peak: the largest shard's (shards do not buffer at the same time).
    mutating func add(_ o: Self) {
        peakBufferedBytes = max(peakBufferedBytes, o.peakBufferedBytes)
        bufferLimitGaps += o.bufferLimitGaps
        lateBytes += o.lateBytes
        globalLimitEvictions += o.globalLimitEvictions
        connectionLimitEvictions += o.connectionLimitEvictions
        closedLimitFinalized += o.closedLimitFinalized
        directionsWithoutConflictCheck += o.directionsWithoutConflictCheck
    }
}

/// Something summed report by report.
private protocol Summable { mutating func add(_ other: Self) }
extension FlowsReport.Packets: Summable {}
extension FlowsReport.Limits: Summable {}
extension AnalysisReport.Totals: Summable {}
extension AnalysisReport.TCPContext: Summable {}
extension ResponseTimesCounts: Summable {}

extension Optional where Wrapped: Summable {
    fileprivate func adding(_ other: Wrapped) -> Wrapped {
        guard var sum = self else { return other }
        sum.add(other)
        return sum
    }
}

extension AnalysisReport {
    /// The report of merged shards: what one run over the whole capture would have said.
    fileprivate init(
        merged connections: MergedConnections, inputs: [FlowsReport.Input], packets: FlowsReport.Packets, limits: FlowsReport.Limits,
        totals: Totals, dissectors: Dissectors, protobuf: Protobuf?
    ) {
        self.inputs = inputs
        self.packets = packets
        self.limits = limits
        self.totals = totals
        self.dissectors = dissectors
        self.protobuf = protobuf
        analyses = []
        listing = nil
        protobufCheck = nil
        mergedConnections = connections
        events = []
        eventsTotal = 0
        warnings = []
    }
}
