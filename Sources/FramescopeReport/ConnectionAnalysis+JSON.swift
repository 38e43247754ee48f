import FramescopeCore

extension ConnectionAnalysis {
    /// The connection as the JSON report lists it, on one line (`--connections-ndjson` writes
    /// the same lines): written straight from the analysis, because a report lists tens of
    /// thousands and building the human formats' `Connection` and `Figures` for each (arrays,
    /// dictionaries, strings) cost more than the analysis. A direction's figures leave out what
    /// is 0, empty, false or null, and what others say (percentages, histograms of one value or
    /// one bin, timelines of one bucket); otherwise they are `Figures`' (the tests hold the HTML
    /// page's figures, built from `Figures`, to these).
    public func writeJSON(to w: inout JSONWriter, protobuf check: ProtobufCheck?) {
        var idAt = 0
        writeJSON(to: &w, protobuf: check, idAt: &idAt)
    }

    /// The line is written in pieces that carry their own punctuation and keys (`,"bytes":`,
    /// `JSONWriter.raw`), in the keys' order: the writer's bookkeeping per member and per
    /// container was a third of listing 50,000 connections.
    ///
    /// - Parameter idAt: set to the writer's position where the ID's digits start (a line a
    ///   worker spilled gets the capture's ID there).
    func writeJSON(to w: inout JSONWriter, protobuf check: ProtobufCheck?, idAt: inout Int) {
        let info = summary.info
        // The spec is read once (each read copies it).
        let typed = spec?.hasTypeField == true  // (the types are counted only then: no dictionary to build otherwise)
        w.compact { w in
            w.raw(#"{"client":"#)
            w.endpoint(info.client)
            // Each direction's figures and statistics borrowed where they lie: a copy retains every box they hold.
            w.raw(#","directions":["#)
            writeDirection(.clientToServer, figures.clientToServer, summary.directions.clientToServer, typed: typed, check: check, to: &w)
            w.raw(0x2C)
            writeDirection(.serverToClient, figures.serverToClient, summary.directions.serverToClient, typed: typed, check: check, to: &w)
            w.raw(#"],"dissector":"#)
            if let name = spec?.name { w.recurringString(name) } else { w.null() }
            w.raw(#","end":""#)
            w.raw(summary.end.literal)
            w.raw(#"","firstFrame":"#)
            w.int(info.firstFrame)
            w.raw(#","firstTime":"#)
            w.epoch(info.firstSeen)
            w.raw(#","id":"#)
            idAt = w.position
            w.int(info.id.rawValue)
            if let rtt = summary.initialRTTNanoseconds {
                w.raw(#","initialRTT":"#)
                w.decimal(rtt, scale: 9)
            }
            w.raw(#","lastTime":"#)
            w.epoch(summary.lastSeen)
            w.raw(#","server":"#)
            w.endpoint(info.server)
            w.raw(#","start":""#)
            w.raw(startLiteral)
            w.raw(#""}"#)
        }
    }

    /// A direction without what the connection says (its endpoints: the first direction is the
    /// client's) or what is 0 or empty: `{}` for one that carried nothing.
    private func writeDirection(
        _ d: Direction, _ a: borrowing DirectionAnalysis, _ stats: borrowing DirectionStatistics, typed: Bool, check: ProtobufCheck?,
        to w: inout JSONWriter
    ) {
        var members = SparseMembers()
        members.counter(#""bytes":"#, stats.bytes, &w)
        let segments = stats.segments + a.recutSegments
        // Most directions of a many-connection capture counted nothing: no figures, without the checks in `writeFigures`.
        if segments != 0 || !a.isBlank {
            members.next(#""figures":"#, &w)
            writeFigures(a, segments: segments, check: check, to: &w)
        }
        members.counter(#""gapBytes":"#, stats.gapBytes, &w)
        if typed, let types = mergedTypes(a, d) {
            members.next(#""mergedTypes":"#, &w)
            w.counts(types)
        }
        if typed, let types = messageTypes(a, d) {
            members.next(#""messageTypes":"#, &w)
            w.counts(types)
        }
        if typed, let types = partialTypes(a, d) {
            members.next(#""partialTypes":"#, &w)
            w.counts(types)
        }
        Self.writeTCP(stats, members: &members, to: &w)
        if a.timeline.spansBuckets {
            members.next(#""timeline":"#, &w)
            Self.write(a.timeline, to: &w)
        }
        members.close(&w)
    }

    /// A direction's TCP figures, `"tcp":{…}`, left out when there are none.
    private static func writeTCP(_ stats: borrowing DirectionStatistics, members direction: inout SparseMembers, to w: inout JSONWriter) {
        let tcp = stats.tcp
        guard tcp.ackRTT.count > 0 || tcp.duplicateAcks > 0 || tcp.zeroWindows > 0 || tcp.windowFull > 0 || stats.retransmissions > 0 else { return }
        direction.next(#""tcp":"#, &w)
        var members = SparseMembers()
        if tcp.ackRTT.count > 0 {
            members.next(#""ackRTT":"#, &w)
            w.raw(#"{"count":"#)
            w.int(tcp.ackRTT.count)
            w.raw(#","max":"#)
            w.decimal(Int64(tcp.ackRTT.maximum), scale: 9)  // nanoseconds as seconds
            w.raw(#","min":"#)
            w.decimal(Int64(tcp.ackRTT.minimum), scale: 9)
            w.raw(#","sum":"#)
            w.decimal(Int64(tcp.ackRTT.sum), scale: 9)
            w.raw(0x7D)
        }
        members.counter(#""duplicateAcks":"#, tcp.duplicateAcks, &w)
        members.counter(#""retransmissions":"#, stats.retransmissions, &w)
        members.counter(#""windowFull":"#, tcp.windowFull, &w)
        members.counter(#""zeroWindows":"#, tcp.zeroWindows, &w)
        members.close(&w)
    }

    /// The causes in name order, as `field(_:counts:)` writes their dictionary, without building
    /// it (a dictionary per direction was a tenth of the listing).
    private static func write(_ causes: CauseCounts, to w: inout JSONWriter) {
        var members = SparseMembers()
        for cause in causesByName { members.counter(cause.jsonKey, causes[cause], &w) }
        members.close(&w)
    }

    /// A direction's timeline, the fields of `AnalysisReport.Timeline` (what the human formats
    /// draw), written straight from its counts: no arrays, and the bucket width without
    /// `Double.description`.
    private static func write(_ t: EventTimeline, to w: inout JSONWriter) {
        let buckets = t.bucketsInUse
        w.raw(#"{"bucketSeconds":"#)
        w.decimal(t.bucketNanoseconds, scale: 9)
        w.raw(#","malformed":"#)
        w.naturals(count: buckets) { t.count(.malformed, inBucket: $0) }
        w.raw(#","merged":"#)
        w.naturals(count: buckets) { t.count(.merged, inBucket: $0) }
        w.raw(#","origin":"#)
        w.epoch(t.origin)
        w.raw(#","partial":"#)
        w.naturals(count: buckets) { t.count(.partial, inBucket: $0) }
        w.raw(0x7D)
    }

    private static let causesByName = SplitCause.allCases.sorted { $0.description < $1.description }

    /// The reasons counted, in name order, as `field(_:counts:)` writes their dictionary, without
    /// building it (two dictionaries and a sort per direction with invalid bodies: a third of
    /// listing 1,000 connections of them).
    private static func write<Reason: CountedReason & RawRepresentable<String>>(
        _ counts: ReasonCounts<Reason>, in byName: [Reason], to w: inout JSONWriter
    ) {
        var members = SparseMembers()
        for reason in byName {
            guard let n = counts[reason] else { continue }
            members.next(&w)
            w.string(reason.rawValue)
            w.raw(0x3A)
            w.int(n)
        }
        members.close(&w)
    }

    private static let malformedByName = MalformedReason.allCases.sorted { $0.rawValue < $1.rawValue }
    private static let failuresByName = ProtobufFailure.allCases.sorted { $0.rawValue < $1.rawValue }

    /// A histogram's four points, `{"max":…,"min":…,"p50":…,"p99":…}`, each written by `value`.
    private static func write(points h: QuantileHistogram, to w: inout JSONWriter, _ value: (Int64, inout JSONWriter) -> Void) {
        let p = AnalysisReport.Distribution.points(h)
        w.raw(#"{"max":"#)
        value(p.max, &w)
        w.raw(#","min":"#)
        value(p.min, &w)
        w.raw(#","p50":"#)
        value(p.p50, &w)
        w.raw(#","p99":"#)
        value(p.p99, &w)
        w.raw(0x7D)
    }

    /// `[[a,n],[b,m]]`, the pairs `each` gives.
    private static func writePairs(to w: inout JSONWriter, _ each: ((Int64, Int) -> Void) -> Void) {
        w.raw(0x5B)
        var first = true
        each { value, n in
            if !first { w.raw(0x2C) }
            first = false
            w.raw(0x5B)
            w.int(value)
            w.raw(0x2C)
            w.int(n)
            w.raw(0x5D)
        }
        w.raw(0x5D)
    }

    /// `Figures(a, segments:, protobuf:)` as the totals write it, without what the others say
    /// (see `writeJSON`), and without building `Figures`; for a direction that counted something.
    private func writeFigures(_ a: borrowing DirectionAnalysis, segments: Int, check: ProtobufCheck?, to w: inout JSONWriter) {
        var members = SparseMembers()
        // A histogram only when its maximum and the count of what it counts do not say it all.
        func pairs(_ key: StaticString, _ h: CountHistogram, counting total: Int) {
            guard !h.isEmpty, !(h.holdsOnlyMaximum && h.total == total) else { return }
            members.next(key, &w)
            Self.writePairs(to: &w) { body in h.forEachNonZero { body(Int64($0), $1) } }
        }
        if a.assemblyLatencyMicroseconds.maximum > 0 {
            members.next(#""assemblyLatency":"#, &w)
            Self.write(points: a.assemblyLatencyMicroseconds, to: &w) { $1.decimal($0, scale: 6) }  // microseconds as seconds
        }
        members.counter(#""boundariesNotFound":"#, a.boundariesNotFound, &w)
        if let bits = a.boundaryEvidenceBits {
            members.next(#""boundaryEvidenceBits":"#, &w)
            w.tenths(oneDecimal(bits))
        }
        members.counter(#""damagedByGaps":"#, a.damagedByGaps, &w)
        members.counter(#""incompleteAtEnd":"#, a.incompleteAtEnd, &w)
        members.counter(#""incompleteBytes":"#, a.incompleteBytes, &w)
        members.counter(#""leadingBytes":"#, a.leadingBytes, &w)
        members.counter(#""malformed":"#, a.malformed, &w)
        if !a.malformedByReason.isEmpty {
            members.next(#""malformedByReason":"#, &w)
            Self.write(a.malformedByReason, in: Self.malformedByName, to: &w)
        }
        members.counter(#""maxMessagesPerSegment":"#, a.messagesPerSegment.maximum, &w)
        members.counter(#""maxSegmentsPerMessage":"#, a.segmentsPerMessage.maximum, &w)
        if a.mergedSegments > 0 {
            members.next(#""mergedCauses":"#, &w)
            Self.write(a.mergedCauses, to: &w)
        }
        members.counter(#""mergedSegments":"#, a.mergedSegments, &w)
        members.counter(#""messageBytes":"#, a.messageBytes, &w)
        if a.messages > 0 {
            members.next(#""messageSize":"#, &w)
            // Sizes as `Distribution(sizes:)` gives them, doubles: whole numbers below 10^15 read as integers.
            Self.write(points: a.sizes, to: &w) { v, w in v < 1_000_000_000_000_000 ? w.int(v) : w.double(Double(v)) }
            if !a.sizes.fillsOnePowerOfTwoBin {
                members.next(#""messageSizeBins":"#, &w)
                Self.writePairs(to: &w) { body in a.sizes.forEachPowerOfTwoBin(body) }
            }
        }
        members.counter(#""messages":"#, a.messages, &w)
        pairs(#""messagesPerSegment":"#, a.messagesPerSegment, counting: segments)
        members.counter(#""naiveReaderLoss":"#, a.naiveReaderLoss, &w)
        if a.partialMessages > 0 {
            members.next(#""partialCauses":"#, &w)
            Self.write(a.partialCauses, to: &w)
        }
        members.counter(#""partialMessages":"#, a.partialMessages, &w)
        members.counter(#""preambleBytes":"#, a.preambleBytes, &w)
        if let check, a.protobufChecked > 0 {
            members.next(#""protobuf":"#, &w)
            w.raw(#"{"checked":"#)
            w.int(a.protobufChecked)
            if let schema = check.schema, schema.countBy != nil {
                w.raw(#","counts":"#)
                w.counts(Dictionary(a.protobufCounts.map { (schema.countLabel($0.key), $0.value) }, uniquingKeysWith: +))
            }
            // Like the figures around it, without what is 0 or empty (most bodies are valid).
            if a.protobufInvalid > 0 {
                w.raw(#","invalid":"#)
                w.int(a.protobufInvalid)
                w.raw(#","invalidByReason":"#)
                Self.write(a.protobufInvalidByReason, in: Self.failuresByName, to: &w)
            }
            w.raw(0x7D)
        }
        members.counter(#""resyncs":"#, a.resyncs, &w)
        members.counter(#""segments":"#, segments, &w)
        members.counter(#""segmentsOverMSS":"#, a.segmentsOverMSS, &w)
        pairs(#""segmentsPerMessage":"#, a.segmentsPerMessage, counting: a.messages)
        if a.stopped {
            members.next(#""stopped":"#, &w)
            w.raw("true")
        }
        members.counter(#""undissectedBytes":"#, a.undissectedBytes, &w)
        members.close(&w)
    }
}

/// The members of an object that leaves out what is 0, written as pieces (`JSONWriter.raw`):
/// `{` before the first, `,` before the others, `{}` when none came.
private struct SparseMembers {
    private var opened = false

    /// Starts the next member: its separator, then `key` (`"name":`).
    @inline(__always)
    mutating func next(_ key: StaticString, _ w: inout JSONWriter) {
        next(&w)
        w.raw(key)
    }

    /// The next member's separator; the caller writes its key.
    @inline(__always)
    mutating func next(_ w: inout JSONWriter) {
        w.raw(opened ? 0x2C : 0x7B)
        opened = true
    }

    /// `key` and `value`, unless it is 0.
    @inline(__always)
    mutating func counter(_ key: StaticString, _ value: Int, _ w: inout JSONWriter) {
        guard value != 0 else { return }
        next(key, &w)
        w.int(value)
    }

    @inline(__always)
    mutating func counter(_ key: StaticString, _ value: Int64, _ w: inout JSONWriter) {
        guard value != 0 else { return }
        next(key, &w)
        w.int(value)
    }

    func close(_ w: inout JSONWriter) {
        if opened { w.raw(0x7D) } else { w.raw("{}") }
    }
}

extension SplitCause {
    /// `"name":`, the cause's key in a JSON object of counts, as a literal.
    var jsonKey: StaticString {
        switch self {
        case .offload: #""offload":"#
        case .mss: #""mss":"#
        case .window: #""window":"#
        case .retransmission: #""retransmission":"#
        case .nagle: #""nagle":"#
        case .writes: #""writes":"#
        }
    }
}

extension ConnectionEnd {
    /// `rawValue`, as a literal the JSON writer copies without a scan.
    var literal: StaticString {
        switch self {
        case .fin: "fin"
        case .halfClosed: "half-closed"
        case .rst: "rst"
        case .open: "open"
        }
    }
}
