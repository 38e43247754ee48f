import FramescopeCore

/// Connections, directions, figures and events as the report holds them, converted from the
/// analysis (percentages computed here, once, for every format).
extension AnalysisReport.Connection {
    init(_ a: ConnectionAnalysis, protobuf: ProtobufCheck?) {
        let info = a.summary.info
        id = info.id.rawValue
        client = info.client.description
        server = info.server.description
        dissector = a.specName
        start = a.startName
        end = a.summary.end.rawValue
        firstTime = info.firstSeen.epochString
        lastTime = a.summary.lastSeen.epochString
        let (client, server) = (client, server)  // each formatted once
        directions = Direction.allCases.map { d in
            let (from, to) = d == .clientToServer ? (client, server) : (server, client)
            let stats = a.summary[d]
            let analysis = a.figures[d]
            let figures = AnalysisReport.Figures(analysis, segments: stats.segments + analysis.recutSegments, protobuf: protobuf)
            return AnalysisReport.DirectionReport(
                from: from, to: to, bytes: stats.bytes, gapBytes: stats.gapBytes, figures: figures, messageTypes: a.messageTypes(analysis, d), partialTypes: a.partialTypes(analysis, d), mergedTypes: a.mergedTypes(analysis, d),
                timeline: analysis.timeline.spansBuckets ? AnalysisReport.Timeline(analysis.timeline) : nil)
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
        partialCauses = a.partialCauses.dictionary
        mergedCauses = a.mergedCauses.dictionary
        segmentsPerMessage = a.segmentsPerMessage.nonZero.map { [$0.value, $0.count] }
        maxSegmentsPerMessage = a.segmentsPerMessage.maximum
        mergedSegments = a.mergedSegments
        mergedPercent = percent(a.mergedSegments, of: segs)
        messagesPerSegment = a.messagesPerSegment.nonZero.map { [$0.value, $0.count] }
        maxMessagesPerSegment = a.messagesPerSegment.maximum
        naiveReaderLoss = a.naiveReaderLoss
        naiveReaderLossPercent = percent(a.naiveReaderLoss, of: a.messages)
        malformed = a.malformed
        malformedByReason = Dictionary(uniqueKeysWithValues: a.malformedByReason.dictionary.map { ($0.key.rawValue, $0.value) })
        incompleteAtEnd = a.incompleteAtEnd
        incompleteBytes = a.incompleteBytes
        damagedByGaps = a.damagedByGaps
        undissectedBytes = a.undissectedBytes
        leadingBytes = a.leadingBytes
        boundaryEvidenceBits = a.boundaryEvidenceBits.map(oneDecimal)
        boundariesNotFound = a.boundariesNotFound
        preambleBytes = a.preambleBytes
        resyncs = a.resyncs
        stopped = a.stopped
        assemblyLatency = .init(microseconds: a.assemblyLatencyMicroseconds)
        assemblyLatencyBins = a.assemblyLatencyMicroseconds.powerOfTwoBins.map { [$0.lower, Int64($0.count)] }
        segmentsOverMSS = a.segmentsOverMSS
        protobuf = check.map { check in
            AnalysisReport.ProtobufFigures(
                checked: a.protobufChecked, invalid: a.protobufInvalid, invalidPercent: percent(a.protobufInvalid, of: a.protobufChecked),
                invalidByReason: Dictionary(uniqueKeysWithValues: a.protobufInvalidByReason.dictionary.map { ($0.key.rawValue, $0.value) }),
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
        let p = Self.points(h)
        self.init(min: Double(p.min), p50: Double(p.p50), p99: Double(p.p99), max: Double(p.max))
    }

    init(microseconds h: QuantileHistogram) {
        let p = Self.points(h)
        func s(_ v: Int64) -> Double { Double(v) / 1e6 }
        self.init(min: s(p.min), p50: s(p.p50), p99: s(p.p99), max: s(p.max))
    }

    /// A histogram's four points in its own units (the minimum 0 when it is empty).
    static func points(_ h: QuantileHistogram) -> (min: Int64, p50: Int64, p99: Int64, max: Int64) {
        let (p50, p99) = h.quantiles(0.5, 0.99)
        return (h.count == 0 ? 0 : h.minimum, p50, p99, h.maximum)
    }
}

/// How a Wireshark filter names a connection: `tcp.stream == N`, or, where the frame numbers are an
/// original capture's (a shard cut by `split`, whose stream numbers are its own), by its addresses
/// and ports (`ip:port` or `[ipv6]:port` text).
func connectionFilter(_ id: Int, client: String?, server: String?, byAddress: Bool) -> String {
    func parts(_ endpoint: String?) -> (address: Substring, port: Substring)? {
        guard let endpoint, let colon = endpoint.lastIndex(of: ":") else { return nil }
        let address = endpoint[..<colon]
        return (address.hasPrefix("[") ? address.dropFirst().dropLast() : address, endpoint[endpoint.index(after: colon)...])
    }
    guard byAddress, let a = parts(client), let b = parts(server) else { return "tcp.stream == \(id)" }
    let ip = client!.hasPrefix("[") ? "ipv6.addr" : "ip.addr"
    return "\(ip) == \(a.address) && \(ip) == \(b.address) && tcp.port == \(a.port) && tcp.port == \(b.port)"
}

/// How events and examples name a connection: its endpoints as text and the Wireshark filter that
/// selects it, made once per connection (10,000 events of a few connections formatted four endpoints
/// and a filter each: a tenth of a run with many invalid bodies).
struct ConnectionLabels {
    let client: Endpoint, server: Endpoint
    let clientText: String, serverText: String
    let stream: String

    init(_ id: ConnectionID, endpoints: (Endpoint, Endpoint)?, originalFrames: Bool) {
        let (client, server) = endpoints ?? (Endpoint(address: IPAddress(ipv4: 0), port: 0), Endpoint(address: IPAddress(ipv4: 0), port: 0))
        let (clientText, serverText) = (client.description, server.description)
        (self.client, self.server, self.clientText, self.serverText) = (client, server, clientText, serverText)
        stream = connectionFilter(
            id.rawValue, client: endpoints == nil ? nil : clientText, server: endpoints == nil ? nil : serverText, byAddress: originalFrames)
    }

    /// (from, to) as text, and the sender, for a direction.
    func ends(_ direction: Direction) -> (from: String, to: String, sender: Endpoint) {
        direction == .clientToServer ? (clientText, serverText, client) : (serverText, clientText, server)
    }
}

extension AnalysisReport.Example {
    init(_ e: SplitExample, labels: ConnectionLabels) {
        let (from, to, sender) = labels.ends(e.direction)
        kind = e.kind.rawValue
        connection = e.connection.rawValue
        self.from = from
        self.to = to
        offset = e.offset
        length = e.length
        firstFrame = e.firstFrame
        lastFrame = e.lastFrame
        count = e.count
        cause = e.cause.description
        time = e.timestamp.epochString
        wiresharkFilter = e.kind == .merged
            ? "\(labels.stream) && frame.number == \(e.firstFrame)"
            : "\(labels.stream) && tcp.srcport == \(sender.port) && tcp.len > 0 && frame.number >= \(e.firstFrame) && frame.number <= \(e.lastFrame)"
    }

    /// One line: what it is, where, and why.
    var sentence: String {
        let k: SplitExample.Kind = kind == "partial" ? .partial : .merged
        let why = SplitCause.allCases.first { $0.description == cause }.map { "; why: \($0.explanation(k))" } ?? ""
        return k == .partial
            ? "#\(connection) \(from) → \(to): a \(length)-byte message at offset \(offset) in \(count) segments, frames \(firstFrame)–\(lastFrame)\(why)"
            : "#\(connection) \(from) → \(to): the segment at offset \(offset) (frame \(firstFrame)) carries bytes of \(count) messages\(why)"
    }
}

extension AnalysisReport.Event {
    init(_ e: AnalysisEvent, labels: ConnectionLabels) {
        let (from, to, _) = labels.ends(e.direction)
        kind = e.kind.rawValue
        reason = e.reason?.rawValue ?? e.protobufFailure?.reason.rawValue
        failedAt = e.protobufFailure?.offset
        failedInFrame = e.protobufFailure?.frame
        evidenceBits = e.evidenceBits.map(oneDecimal)
        looksLike = e.looksLike
        connection = e.connection.rawValue
        self.from = from
        self.to = to
        offset = e.offset
        frame = e.frame
        timestamp = e.timestamp
        bytes = e.bytes
        length = e.length
        connectionFilter = labels.stream
    }
}

/// Percentage with one decimal.
public func percent(_ part: Int, of whole: Int) -> Double {
    whole == 0 ? 0 : (Double(part) * 1000 / Double(whole)).rounded() / 10
}

/// Lower-case hex, bytes separated by spaces.
func hex(_ bytes: [UInt8]) -> String {
    guard !bytes.isEmpty else { return "" }
    return String(unsafeUninitializedCapacity: bytes.count * 3 - 1) { writeHex(bytes, into: $0, at: 0) }
}

/// Writes `hex(bytes)` at `start` (room for 3 × count − 1 bytes); returns the index after it.
/// Each byte's two digits are one load from a table and one store.
func writeHex(_ bytes: [UInt8], into out: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
    let pairs = UnsafeRawPointer(hexPairs.utf8Start)
    var at = out.baseAddress! + start
    for (i, b) in bytes.enumerated() {
        if i > 0 {
            at[0] = 0x20
            at += 1
        }
        UnsafeMutableRawPointer(at).storeBytes(of: pairs.loadUnaligned(fromByteOffset: Int(b) &* 2, as: UInt16.self), as: UInt16.self)
        at += 2
    }
    return at - out.baseAddress!
}

/// "00" to "ff": the two hex digits of `n` at `2 n`.
private var hexPairs: StaticString {
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"
}

extension ConnectionAnalysis {
    /// `syn`, or `mid-stream` for a connection picked up without its handshake.
    var startName: String { startLiteral.description }
    /// How the connection started, as a literal the JSON writer copies without a scan.
    var startLiteral: StaticString { summary.synSeen ? "syn" : "mid-stream" }

    /// A direction's messages by type name (`typeLabel`), when the dissector reads a type.
    func messageTypes(_ analysis: DirectionAnalysis, _ direction: Direction) -> [String: Int]? {
        spec.flatMap { typeCounts(analysis.types, spec: $0, direction) }
    }

    /// A direction's partial messages by type name; nil when there are none.
    func partialTypes(_ analysis: DirectionAnalysis, _ direction: Direction) -> [String: Int]? {
        spec.flatMap { typeCounts(analysis.partialTypes, spec: $0, direction) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A direction's merged messages (sharing a segment with another) by type name; nil when none.
    func mergedTypes(_ analysis: DirectionAnalysis, _ direction: Direction) -> [String: Int]? {
        spec.flatMap { typeCounts(analysis.gluedTypes, spec: $0, direction) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Both directions together.
    public var combined: AnalysisReport.Figures {
        var all = directions?.clientToServer ?? DirectionAnalysis()
        if let directions { all.merge(directions.serverToClient) }
        return AnalysisReport.Figures(all)
    }
}

/// Evidence in bits, to one decimal (more would claim a precision the estimate lacks).
func oneDecimal(_ bits: Double) -> Double { (bits * 10).rounded(.down) / 10 }

/// Counts by type value as counts by name (`typeLabel`), for a SPEC that reads a type; summed by
/// label (MQTT names every flag combination of a packet type alike).
func typeCounts(_ counts: [UInt64: Int], spec: DissectorSpec, _ direction: Direction) -> [String: Int]? {
    guard spec.hasTypeField else { return nil }
    let names = spec.typeNames(fromClient: direction == .clientToServer)
    return Dictionary(counts.map { (typeLabel($0.key, names: names), $0.value) }, uniquingKeysWith: +)
}

extension AnalysisReport.AsCaptured {
    init(_ f: AnalysisReport.Figures) {
        self.init(
            segments: f.segments, partialMessages: f.partialMessages, partialPercent: f.partialPercent, mergedSegments: f.mergedSegments,
            mergedPercent: f.mergedPercent, naiveReaderLoss: f.naiveReaderLoss, naiveReaderLossPercent: f.naiveReaderLossPercent,
            partialCauses: f.partialCauses, mergedCauses: f.mergedCauses)
    }

    /// "as captured (without --mss): 0% split (0 partial), 0% of 20 segments merged (0), one-read loss 0%".
    var sentence: String {
        "as captured (without --mss): \(percentText(partialPercent)) split (\(partialMessages) partial), \(percentText(mergedPercent)) of "
            + "\(counted(segments, "segment")) merged (\(mergedSegments)), one-read loss \(percentText(naiveReaderLossPercent))"
    }
}

/// Assembly latencies by type value as by name, the histograms of values sharing a name merged.
func typeLatencies(_ latencies: LatencyByType, spec: DissectorSpec, _ direction: Direction) -> [String: AnalysisReport.TypeLatency]? {
    guard spec.hasTypeField else { return nil }
    return typeLatencies(typeLatencyHistograms(latencies, spec: spec, direction))
}

/// The histograms by type name.
func typeLatencyHistograms(_ latencies: LatencyByType, spec: DissectorSpec, _ direction: Direction) -> [String: QuantileHistogram] {
    let names = spec.typeNames(fromClient: direction == .clientToServer)
    var byName: [String: QuantileHistogram] = [:]
    for (value, histogram) in latencies.byType { byName[typeLabel(value, names: names), default: QuantileHistogram(bits: histogram.bits)].merge(histogram) }
    return byName
}

func typeLatencies(_ byName: [String: QuantileHistogram]) -> [String: AnalysisReport.TypeLatency] {
    byName.mapValues { AnalysisReport.TypeLatency(messages: $0.count, latency: .init(microseconds: $0)) }
}

extension AnalysisReport.Figures {
    /// The totals by type of one direction.
    mutating func addTypes(_ analysis: DirectionAnalysis, latencies: LatencyByType, spec: DissectorSpec, _ direction: Direction) {
        messageTypes = typeCounts(analysis.types, spec: spec, direction)
        partialTypes = typeCounts(analysis.partialTypes, spec: spec, direction)
        mergedTypes = typeCounts(analysis.gluedTypes, spec: spec, direction)
        assemblyLatencyByType = typeLatencies(latencies, spec: spec, direction)
    }

    /// "Query ×84 (3 partial, 5 merged, assembled in 1.2 ms at p99)": a type's counts, its
    /// assembly latency said only when some of its messages were partial.
    static func typeSummary(_ t: (name: String, messages: Int, partial: Int?, merged: Int?, latencyP99: Double?)) -> String {
        var parts: [String] = []
        if let partial = t.partial { parts.append("\(partial) partial") }
        if let merged = t.merged { parts.append("\(merged) merged") }
        if t.partial != nil, let p99 = t.latencyP99, p99 > 0 { parts.append("assembled in \(duration(p99)) at p99") }
        return "\(t.name) ×\(t.messages)" + (parts.isEmpty ? "" : " (" + parts.joined(separator: ", ") + ")")
    }

    /// Totals by type, most messages first (ties by name), each with its partial and merged
    /// messages and the p99 of its assembly latency (seconds).
    var rankedTypes: [(name: String, messages: Int, partial: Int?, merged: Int?, latencyP99: Double?)] {
        (messageTypes ?? [:]).sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map {
            ($0.key, $0.value, partialTypes?[$0.key], mergedTypes?[$0.key], assemblyLatencyByType?[$0.key]?.latency.p99)
        }
    }
}
