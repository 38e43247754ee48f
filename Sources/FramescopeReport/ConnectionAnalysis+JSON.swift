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
    ///   shard hands over gets the capture's ID there: `ShardedLines`).
    func writeJSON(to w: inout JSONWriter, protobuf check: ProtobufCheck?, idAt: inout Int) {
        let typed = specHasTypeField  // (the types are counted only then: no dictionary to build otherwise)
        // Compact without `compact`'s closure: `writeDirection` inlined into a closure crashes
        // the compiler at -Onone (Swift 6.3.1, IRGen).
        let layout = w.beginCompact()
        var at = w.room(256)
        at = JSONText.raw(#"{"client":"#, at: at)
        at = w.endpoint(summary.info.client, at: at)
        w.commit(JSONText.raw(#","directions":["#, at: at))
        writeDirection(.clientToServer, figures.clientToServer, summary.directions.clientToServer, typed: typed, check: check, to: &w)
        w.raw(0x2C)
        writeDirection(.serverToClient, figures.serverToClient, summary.directions.serverToClient, typed: typed, check: check, to: &w)
        w.raw(#"],"dissector":"#)
        if let name = specName { w.recurringString(name) } else { w.null() }
        at = w.room(512)
        at = JSONText.raw(#","end":""#, at: at)
        at = JSONText.raw(summary.end.literal, at: at)
        at = JSONText.raw(#"","firstFrame":"#, at: at)
        at = JSONText.integer(Int64(summary.info.firstFrame), at: at)
        at = JSONText.raw(#","firstTime":"#, at: at)
        at = w.epoch(summary.info.firstSeen, at: at)
        at = JSONText.raw(#","id":"#, at: at)
        idAt = w.position(at: at)
        at = JSONText.integer(Int64(summary.info.id.rawValue), at: at)
        if let rtt = summary.initialRTTNanoseconds {
            at = JSONText.raw(#","initialRTT":"#, at: at)
            at = JSONText.scaled(rtt, scale: 9, at: at)
        }
        at = JSONText.raw(#","lastTime":"#, at: at)
        at = w.epoch(summary.lastSeen, at: at)
        at = JSONText.raw(#","server":"#, at: at)
        at = w.endpoint(summary.info.server, at: at)
        at = JSONText.raw(#","start":""#, at: at)
        at = JSONText.raw(startLiteral, at: at)
        w.commit(JSONText.raw(#""}"#, at: at))
        w.endCompact(layout)
    }

    /// A direction without what the connection says (its endpoints: the first direction is the
    /// client's) or what is 0 or empty: `{}` for one that carried nothing. Its members go in at a
    /// pointer (`JSONText`), in room made for a stretch of them (`stretchRoom`, bounded member by
    /// member); the parts of no fixed size (types, timelines, reasons) through the writer.
    /// Transparent: called, it had each direction's figures and statistics copied for it, and
    /// its frame set up, twice a line (3.3 M instructions of listing varint-50k).
    @_transparent
    private func writeDirection(
        _ d: Direction, _ a: DirectionAnalysis, _ stats: DirectionStatistics, typed: Bool, check: ProtobufCheck?,
        to w: inout JSONWriter
    ) {
        var members = SparseMembers()
        var at = w.room(Self.stretchRoom)
        members.counter(#""bytes":"#, stats.bytes, &at)
        let segments = stats.segments + a.recutSegments
        // Most directions of a many-connection capture counted nothing: no figures, without the checks in `writeFigures`.
        if segments != 0 || !a.isBlank {
            members.next(#""figures":"#, &at)
            writeFigures(a, segments: segments, check: check, at: &at, to: &w)
        }
        members.counter(#""gapBytes":"#, stats.gapBytes, &at)
        if typed {
            Self.stretch(&at, &w) { w in
                if let types = mergedTypes(a, d) {
                    members.next(#""mergedTypes":"#, &w)
                    w.counts(types)
                }
                if let types = messageTypes(a, d) {
                    members.next(#""messageTypes":"#, &w)
                    w.counts(types)
                }
                if let types = partialTypes(a, d) {
                    members.next(#""partialTypes":"#, &w)
                    w.counts(types)
                }
            }
        }
        Self.writeTCP(stats, members: &members, at: &at)
        if a.timeline.spansBuckets {
            members.next(#""timeline":"#, &at)
            Self.stretch(&at, &w) { Self.write(a.timeline, to: &$0) }
        }
        members.close(&at)
        w.commit(at)
    }

    /// The most a stretch of fixed-size members writes: at most 30 members of a key and a
    /// number each, or a histogram's 64 pairs.
    private static let stretchRoom = 3_072

    /// Ends the stretch `at` is in, writes what `through` writes through `w` (a part of no fixed
    /// size), and makes a new stretch.
    @inline(__always)
    private static func stretch(_ at: inout UnsafeMutablePointer<UInt8>, _ w: inout JSONWriter, through: (inout JSONWriter) -> Void = { _ in }) {
        w.commit(at)
        through(&w)
        at = w.room(stretchRoom)
    }

    /// A direction's TCP figures, `"tcp":{…}`, left out when there are none (at most 250 bytes).
    /// The round trips to the ACKs only for a direction that carried payload: one that sent
    /// none had only its SYN and FIN acknowledged, whose round trips the connection's
    /// `initialRTT` and the totals' per-direction `ackRTT` give (schema 4). Three directions in
    /// four of a capture of short connections carry none, and those round trips were a fifth of
    /// the bytes of listing them (varint-50k).
    private static func writeTCP(_ stats: borrowing DirectionStatistics, members direction: inout SparseMembers, at: inout UnsafeMutablePointer<UInt8>) {
        let tcp = stats.tcp
        let timed = stats.bytes > 0 && tcp.ackRTT.count > 0
        guard timed || tcp.duplicateAcks > 0 || tcp.zeroWindows > 0 || tcp.windowFull > 0 || stats.retransmissions > 0 else { return }
        direction.next(#""tcp":"#, &at)
        var members = SparseMembers()
        if timed {
            members.next(#""ackRTT":"#, &at)
            at = JSONText.raw(#"{"count":"#, at: at)
            at = JSONText.integer(Int64(tcp.ackRTT.count), at: at)
            at = JSONText.raw(#","max":"#, at: at)
            at = JSONText.scaled(Int64(tcp.ackRTT.maximum), scale: 9, at: at)  // nanoseconds as seconds
            at = JSONText.raw(#","min":"#, at: at)
            at = JSONText.scaled(Int64(tcp.ackRTT.minimum), scale: 9, at: at)
            at = JSONText.raw(#","sum":"#, at: at)
            at = JSONText.scaled(Int64(tcp.ackRTT.sum), scale: 9, at: at)
            at = JSONText.byte(0x7D, at: at)
        }
        members.counter(#""duplicateAcks":"#, tcp.duplicateAcks, &at)
        members.counter(#""retransmissions":"#, stats.retransmissions, &at)
        members.counter(#""windowFull":"#, tcp.windowFull, &at)
        members.counter(#""zeroWindows":"#, tcp.zeroWindows, &at)
        members.close(&at)
    }

    /// The causes in name order, as `field(_:counts:)` writes their dictionary, without building
    /// it (a dictionary per direction was a tenth of the listing). At most 250 bytes.
    private static func write(_ causes: CauseCounts, at: inout UnsafeMutablePointer<UInt8>) {
        var members = SparseMembers()
        for cause in causesByName { members.counter(cause.jsonKey, causes[cause], &at) }
        members.close(&at)
    }

    /// A direction's timeline, the fields of `AnalysisReport.Timeline` (what the human formats
    /// draw), written straight from its counts: no arrays, and the bucket width without
    /// `Double.description`.
    private static func write(_ t: EventTimeline, to w: inout JSONWriter) {
        func series(_ kind: EventTimeline.Kind, _ w: inout JSONWriter) {
            t.withSeries(kind) { w.naturals($0, from: $1, stride: $2, count: $3) }
        }
        w.raw(#"{"bucketSeconds":"#)
        w.decimal(t.bucketNanoseconds, scale: 9)
        w.raw(#","malformed":"#)
        series(.malformed, &w)
        w.raw(#","merged":"#)
        series(.merged, &w)
        w.raw(#","origin":"#)
        w.epoch(t.origin)
        w.raw(#","partial":"#)
        series(.partial, &w)
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

    /// A histogram's four points, `{"max":…,"min":…,"p50":…,"p99":…}`, each written by `value`
    /// (at most 48 bytes each).
    @inline(__always)
    private static func write(
        points h: QuantileHistogram, at: inout UnsafeMutablePointer<UInt8>, _ value: (Int64, UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8>
    ) {
        let p = AnalysisReport.Distribution.points(h)
        at = value(p.max, JSONText.raw(#"{"max":"#, at: at))
        at = value(p.min, JSONText.raw(#","min":"#, at: at))
        at = value(p.p50, JSONText.raw(#","p50":"#, at: at))
        at = JSONText.byte(0x7D, at: value(p.p99, JSONText.raw(#","p99":"#, at: at)))
    }

    /// `[[a,n],[b,m]]`, the pairs `each` gives: at most 64 (`CountHistogram.limit`, 64
    /// power-of-two bins), 44 bytes each.
    @inline(__always)
    private static func writePairs(at: inout UnsafeMutablePointer<UInt8>, _ each: ((Int64, Int) -> Void) -> Void) {
        var text = JSONText.byte(0x5B, at: at)
        var first = true
        each { value, n in
            if !first { text = JSONText.byte(0x2C, at: text) }
            first = false
            text = JSONText.byte(0x5B, at: text)
            text = JSONText.integer(value, at: text)
            text = JSONText.byte(0x2C, at: text)
            text = JSONText.integer(Int64(n), at: text)
            text = JSONText.byte(0x5D, at: text)
        }
        at = JSONText.byte(0x5D, at: text)
    }

    /// `Figures(a, segments:, protobuf:)` as the totals write it, without what the others say
    /// (see `writeJSON`), and without building `Figures`; for a direction that counted something.
    /// Written at `at` in stretches (`stretchRoom`): a stretch ends before a histogram's pairs and
    /// before a part of no fixed size.
    private func writeFigures(
        _ a: borrowing DirectionAnalysis, segments: Int, check: ProtobufCheck?, at: inout UnsafeMutablePointer<UInt8>, to w: inout JSONWriter
    ) {
        var members = SparseMembers()
        // A histogram only when its maximum and the count of what it counts do not say it all.
        func pairs(_ key: StaticString, _ h: CountHistogram, counting total: Int) {
            guard !h.isEmpty, !(h.holdsOnlyMaximum && h.total == total) else { return }
            Self.stretch(&at, &w)
            members.next(key, &at)
            Self.writePairs(at: &at) { body in h.forEachNonZero { body(Int64($0), $1) } }
            Self.stretch(&at, &w)
        }
        if a.assemblyLatencyMicroseconds.maximum > 0 {
            members.next(#""assemblyLatency":"#, &at)
            Self.write(points: a.assemblyLatencyMicroseconds, at: &at) { JSONText.scaled($0, scale: 6, at: $1) }  // microseconds as seconds
        }
        members.counter(#""boundariesNotFound":"#, a.boundariesNotFound, &at)
        if let bits = a.boundaryEvidenceBits {
            members.next(#""boundaryEvidenceBits":"#, &at)
            at = JSONText.tenths(oneDecimal(bits), at: at)
        }
        members.counter(#""damagedByGaps":"#, a.damagedByGaps, &at)
        members.counter(#""incompleteAtEnd":"#, a.incompleteAtEnd, &at)
        members.counter(#""incompleteBytes":"#, a.incompleteBytes, &at)
        members.counter(#""leadingBytes":"#, a.leadingBytes, &at)
        members.counter(#""malformed":"#, a.malformed, &at)
        if !a.malformedByReason.isEmpty {
            members.next(#""malformedByReason":"#, &at)
            Self.stretch(&at, &w) { Self.write(a.malformedByReason, in: Self.malformedByName, to: &$0) }
        }
        members.counter(#""maxMessagesPerSegment":"#, a.messagesPerSegment.maximum, &at)
        members.counter(#""maxSegmentsPerMessage":"#, a.segmentsPerMessage.maximum, &at)
        if a.mergedSegments > 0 {
            members.next(#""mergedCauses":"#, &at)
            Self.write(a.mergedCauses, at: &at)
        }
        members.counter(#""mergedSegments":"#, a.mergedSegments, &at)
        members.counter(#""messageBytes":"#, a.messageBytes, &at)
        if a.messages > 0 {
            members.next(#""messageSize":"#, &at)
            // Sizes as `Distribution(sizes:)` gives them, doubles: whole numbers below 10^15 read as integers.
            Self.write(points: a.sizes, at: &at) { v, at in v < 1_000_000_000_000_000 ? JSONText.integer(v, at: at) : JSONText.shortest(Double(v), at: at) }
            if !a.sizes.fillsOnePowerOfTwoBin {
                Self.stretch(&at, &w)
                members.next(#""messageSizeBins":"#, &at)
                Self.writePairs(at: &at) { body in a.sizes.forEachPowerOfTwoBin(body) }
                Self.stretch(&at, &w)
            }
        }
        members.counter(#""messages":"#, a.messages, &at)
        pairs(#""messagesPerSegment":"#, a.messagesPerSegment, counting: segments)
        members.counter(#""naiveReaderLoss":"#, a.naiveReaderLoss, &at)
        if a.partialMessages > 0 {
            members.next(#""partialCauses":"#, &at)
            Self.write(a.partialCauses, at: &at)
        }
        members.counter(#""partialMessages":"#, a.partialMessages, &at)
        members.counter(#""preambleBytes":"#, a.preambleBytes, &at)
        if let check, a.protobufChecked > 0 {
            members.next(#""protobuf":"#, &at)
            at = JSONText.raw(#"{"checked":"#, at: at)
            at = JSONText.integer(Int64(a.protobufChecked), at: at)
            // Like the figures around it, without what is 0 or empty (most bodies are valid).
            if (check.schema?.countBy != nil) || a.protobufInvalid > 0 {
                Self.stretch(&at, &w) { w in
                    if let schema = check.schema, schema.countBy != nil {
                        w.raw(#","counts":"#)
                        w.counts(Dictionary(a.protobufCounts.map { (schema.countLabel($0.key), $0.value) }, uniquingKeysWith: +))
                    }
                    if a.protobufInvalid > 0 {
                        w.raw(#","invalid":"#)
                        w.int(a.protobufInvalid)
                        w.raw(#","invalidByReason":"#)
                        Self.write(a.protobufInvalidByReason, in: Self.failuresByName, to: &w)
                    }
                }
            }
            at = JSONText.byte(0x7D, at: at)
        }
        members.counter(#""resyncs":"#, a.resyncs, &at)
        members.counter(#""segments":"#, segments, &at)
        members.counter(#""segmentsOverMSS":"#, a.segmentsOverMSS, &at)
        pairs(#""segmentsPerMessage":"#, a.segmentsPerMessage, counting: a.messages)
        if a.stopped {
            members.next(#""stopped":"#, &at)
            at = JSONText.raw("true", at: at)
        }
        members.counter(#""undissectedBytes":"#, a.undissectedBytes, &at)
        members.close(&at)
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

    // The same at a pointer, in room made for them (`JSONWriter.room`): each member at most
    // its key and 21 bytes. The counters are `@_transparent`: with `@inline(__always)` the
    // large writers still called them, 12.5 M instructions of listing varint-50k.

    @inline(__always)
    mutating func next(_ key: StaticString, _ at: inout UnsafeMutablePointer<UInt8>) {
        at = JSONText.raw(key, at: JSONText.byte(opened ? 0x2C : 0x7B, at: at))
        opened = true
    }

    @_transparent
    mutating func counter(_ key: StaticString, _ value: Int, _ at: inout UnsafeMutablePointer<UInt8>) {
        guard value != 0 else { return }
        next(key, &at)
        at = JSONText.integer(Int64(value), at: at)
    }

    @_transparent
    mutating func counter(_ key: StaticString, _ value: Int64, _ at: inout UnsafeMutablePointer<UInt8>) {
        guard value != 0 else { return }
        next(key, &at)
        at = JSONText.integer(value, at: at)
    }

    @inline(__always)
    func close(_ at: inout UnsafeMutablePointer<UInt8>) {
        at = opened ? JSONText.byte(0x7D, at: at) : JSONText.raw("{}", at: at)
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
