import FramescopeCore

/// Reads a report's sections back into the model `merge` sums: counts exactly as written; what
/// is computed from them (percentages, distributions, bins) is computed again after the sum.
struct ReportFields {
    let value: JSONNode
    /// Where in the document, for errors: `totals.all`.
    let path: String
    let fail: (String) -> Error

    init(_ value: JSONNode?, _ path: String, fail: @escaping (String) -> Error) throws {
        guard let value, value.members != nil else { throw fail("\(path) is missing or not an object") }
        (self.value, self.path, self.fail) = (value, path, fail)
    }

    func object(_ key: String) throws -> ReportFields { try ReportFields(value[key], "\(path).\(key)", fail: fail) }

    func optionalObject(_ key: String) throws -> ReportFields? {
        guard let v = value[key], !v.isNull else { return nil }
        return try ReportFields(v, "\(path).\(key)", fail: fail)
    }

    func int(_ key: String) throws -> Int { Int(try int64(key)) }

    /// A count, offset or length: 0…2^48 (281 TB), so that sums over `ReportMerge.maxReports`
    /// reports cannot overflow.
    func int64(_ key: String) throws -> Int64 {
        guard let n = value[key]?.int, (0...Self.largest).contains(n) else { throw fail("\(path).\(key) is missing or not an integer of 0…2^48") }
        return n
    }

    static let largest: Int64 = 1 << 48

    func uint64(_ key: String) throws -> UInt64 {
        guard case .number(let text)? = value[key], let n = UInt64(text) else { throw fail("\(path).\(key) is missing or not a frame number") }
        return n
    }

    func double(_ key: String) throws -> Double {
        guard let x = value[key]?.double else { throw fail("\(path).\(key) is missing or not a number") }
        return x
    }

    func optionalDouble(_ key: String) throws -> Double? {
        guard let v = value[key], !v.isNull else { return nil }
        return try double(key)
    }

    func string(_ key: String) throws -> String {
        guard let s = value[key]?.string else { throw fail("\(path).\(key) is missing or not a string") }
        return s
    }

    func optionalString(_ key: String) throws -> String? {
        guard let v = value[key], !v.isNull else { return nil }
        return try string(key)
    }

    func bool(_ key: String) throws -> Bool {
        guard let b = value[key]?.bool else { throw fail("\(path).\(key) is missing or not true or false") }
        return b
    }

    /// `{"name": count, …}`.
    func counts(_ key: String) throws -> [String: Int] {
        guard let members = value[key]?.members else { throw fail("\(path).\(key) is missing or not an object of counts") }
        var out: [String: Int] = [:]
        for (name, v) in members {
            guard let n = v.int else { throw fail("\(path).\(key).\(name) is not an integer") }
            out[name, default: 0] += Int(n)
        }
        return out
    }

    func optionalCounts(_ key: String) throws -> [String: Int]? { value[key] == nil ? nil : try counts(key) }

    /// `[[value, count], …]`.
    func pairs(_ key: String) throws -> [(Int, Int)] {
        guard let elements = value[key]?.elements else { throw fail("\(path).\(key) is missing or not an array of pairs") }
        return try elements.map { pair in
            guard let p = pair.elements, p.count == 2, let a = p[0].int, let b = p[1].int else { throw fail("\(path).\(key): a member is not [value, count]") }
            return (Int(a), Int(b))
        }
    }

    func array(_ key: String) throws -> [JSONNode] {
        guard let elements = value[key]?.elements else { throw fail("\(path).\(key) is missing or not an array") }
        return elements
    }

    func element(_ v: JSONNode, _ index: Int, of key: String) throws -> ReportFields {
        try ReportFields(v, "\(path).\(key)[\(index)]", fail: fail)
    }
}

/// Counts by name, summed.
func adding(_ a: [String: Int], _ b: [String: Int]) -> [String: Int] { a.merging(b, uniquingKeysWith: +) }

func adding(_ a: [String: Int]?, _ b: [String: Int]?) -> [String: Int]? {
    guard a != nil || b != nil else { return nil }
    return adding(a ?? [:], b ?? [:])
}

/// `[[value, count], …]` pairs summed by value, in value order.
func adding(_ a: [[Int]], _ b: [(Int, Int)]) -> [[Int]] {
    var byValue: [Int: Int] = [:]
    for p in a { byValue[p[0], default: 0] += p[1] }
    for (v, n) in b { byValue[v, default: 0] += n }
    return byValue.sorted { $0.key < $1.key }.map { [$0.key, $0.value] }
}

extension AnalysisReport.Figures {
    /// The counts of a report's figures; what is computed from them is left to `recompute`.
    init(counts f: ReportFields) throws {
        let zero = AnalysisReport.Distribution(min: 0, p50: 0, p99: 0, max: 0)
        self.init(
            segments: try f.int("segments"), messages: try f.int("messages"), messageBytes: try f.int64("messageBytes"), messageSize: zero,
            messageSizeBins: [], partialMessages: try f.int("partialMessages"), partialPercent: 0, partialCauses: try f.counts("partialCauses"),
            mergedCauses: try f.counts("mergedCauses"), segmentsPerMessage: try f.pairs("segmentsPerMessage").map { [$0.0, $0.1] },
            maxSegmentsPerMessage: try f.int("maxSegmentsPerMessage"), mergedSegments: try f.int("mergedSegments"), mergedPercent: 0,
            messagesPerSegment: try f.pairs("messagesPerSegment").map { [$0.0, $0.1] }, maxMessagesPerSegment: try f.int("maxMessagesPerSegment"),
            naiveReaderLoss: try f.int("naiveReaderLoss"), naiveReaderLossPercent: 0, malformed: try f.int("malformed"),
            malformedByReason: try f.counts("malformedByReason"), incompleteAtEnd: try f.int("incompleteAtEnd"),
            incompleteBytes: try f.int64("incompleteBytes"), damagedByGaps: try f.int("damagedByGaps"), undissectedBytes: try f.int64("undissectedBytes"),
            leadingBytes: try f.int64("leadingBytes"), boundaryEvidenceBits: try f.optionalDouble("boundaryEvidenceBits"),
            boundariesNotFound: try f.int("boundariesNotFound"), preambleBytes: try f.int64("preambleBytes"), resyncs: try f.int("resyncs"),
            stopped: try f.bool("stopped"), assemblyLatency: zero, assemblyLatencyBins: [], segmentsOverMSS: try f.int("segmentsOverMSS"),
            protobuf: try f.optionalObject("protobuf").map { p in
                AnalysisReport.ProtobufFigures(
                    checked: try p.int("checked"), invalid: try p.int("invalid"), invalidPercent: 0, invalidByReason: try p.counts("invalidByReason"),
                    counts: try p.optionalCounts("counts"))
            },
            messageTypes: try f.optionalCounts("messageTypes"), partialTypes: try f.optionalCounts("partialTypes"),
            mergedTypes: try f.optionalCounts("mergedTypes"), assemblyLatencyByType: nil,
            asCaptured: try f.optionalObject("asCaptured").map { a in
                AnalysisReport.AsCaptured(
                    segments: try a.int("segments"), partialMessages: try a.int("partialMessages"), partialPercent: 0,
                    mergedSegments: try a.int("mergedSegments"), mergedPercent: 0, naiveReaderLoss: try a.int("naiveReaderLoss"),
                    naiveReaderLossPercent: 0, partialCauses: try a.counts("partialCauses"), mergedCauses: try a.counts("mergedCauses"))
            })
    }

    /// Adds another report's counts.
    mutating func add(_ o: Self) {
        segments += o.segments
        messages += o.messages
        messageBytes += o.messageBytes
        partialMessages += o.partialMessages
        partialCauses = adding(partialCauses, o.partialCauses)
        mergedCauses = adding(mergedCauses, o.mergedCauses)
        segmentsPerMessage = adding(segmentsPerMessage, o.segmentsPerMessage.map { ($0[0], $0[1]) })
        maxSegmentsPerMessage = max(maxSegmentsPerMessage, o.maxSegmentsPerMessage)
        mergedSegments += o.mergedSegments
        messagesPerSegment = adding(messagesPerSegment, o.messagesPerSegment.map { ($0[0], $0[1]) })
        maxMessagesPerSegment = max(maxMessagesPerSegment, o.maxMessagesPerSegment)
        naiveReaderLoss += o.naiveReaderLoss
        malformed += o.malformed
        malformedByReason = adding(malformedByReason, o.malformedByReason)
        incompleteAtEnd += o.incompleteAtEnd
        incompleteBytes += o.incompleteBytes
        damagedByGaps += o.damagedByGaps
        undissectedBytes += o.undissectedBytes
        leadingBytes += o.leadingBytes
        if let theirs = o.boundaryEvidenceBits { boundaryEvidenceBits = min(boundaryEvidenceBits ?? theirs, theirs) }
        boundariesNotFound += o.boundariesNotFound
        preambleBytes += o.preambleBytes
        resyncs += o.resyncs
        stopped = stopped || o.stopped
        segmentsOverMSS += o.segmentsOverMSS
        if let theirs = o.protobuf {
            if var mine = protobuf {
                mine.checked += theirs.checked
                mine.invalid += theirs.invalid
                mine.invalidByReason = adding(mine.invalidByReason, theirs.invalidByReason)
                mine.counts = adding(mine.counts, theirs.counts)
                protobuf = mine
            } else {
                protobuf = theirs
            }
        }
        messageTypes = adding(messageTypes, o.messageTypes)
        partialTypes = adding(partialTypes, o.partialTypes)
        mergedTypes = adding(mergedTypes, o.mergedTypes)
        if let theirs = o.asCaptured {
            if var mine = asCaptured {
                mine.segments += theirs.segments
                mine.partialMessages += theirs.partialMessages
                mine.mergedSegments += theirs.mergedSegments
                mine.naiveReaderLoss += theirs.naiveReaderLoss
                mine.partialCauses = adding(mine.partialCauses, theirs.partialCauses)
                mine.mergedCauses = adding(mine.mergedCauses, theirs.mergedCauses)
                asCaptured = mine
            } else {
                asCaptured = theirs
            }
        }
    }

    /// What the counts and the histograms give: percentages, distributions and bins, as
    /// `init(_: DirectionAnalysis)` computes them.
    mutating func recompute(sizes: QuantileHistogram, latency: QuantileHistogram, latencyByType: [String: QuantileHistogram]?) {
        messageSize = .init(sizes: sizes)
        messageSizeBins = sizes.powerOfTwoBins.map { [$0.lower, Int64($0.count)] }
        assemblyLatency = .init(microseconds: latency)
        assemblyLatencyBins = latency.powerOfTwoBins.map { [$0.lower, Int64($0.count)] }
        assemblyLatencyByType = latencyByType.map(typeLatencies)
        partialPercent = percent(partialMessages, of: messages)
        mergedPercent = percent(mergedSegments, of: segments)
        naiveReaderLossPercent = percent(naiveReaderLoss, of: messages)
        if protobuf != nil { protobuf!.invalidPercent = percent(protobuf!.invalid, of: protobuf!.checked) }
        if let a = asCaptured {  // the same messages, in the segments as captured
            asCaptured!.partialPercent = percent(a.partialMessages, of: messages)
            asCaptured!.mergedPercent = percent(a.mergedSegments, of: a.segments)
            asCaptured!.naiveReaderLossPercent = percent(a.naiveReaderLoss, of: messages)
        }
    }
}
