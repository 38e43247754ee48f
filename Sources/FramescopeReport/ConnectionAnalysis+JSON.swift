import FramescopeCore

extension ConnectionAnalysis {
    /// The connection as the JSON report lists it, on one line (`--connections-ndjson` writes
    /// the same lines): written straight from the analysis, because a report lists tens of
    /// thousands and building the human formats' `Connection` and `Figures` for each (arrays,
    /// dictionaries, strings) cost more than the analysis. A direction's figures leave out what
    /// is 0, empty, false or null; otherwise they are `Figures`' (the tests hold the HTML page's
    /// figures, built from `Figures`, to these).
    public func writeJSON(to w: inout JSONWriter, protobuf check: ProtobufCheck?) {
        var idAt = 0
        writeJSON(to: &w, protobuf: check, idAt: &idAt)
    }

    /// - Parameter idAt: set to the writer's position where the ID's digits start (a line a
    ///   worker spilled gets the capture's ID there).
    func writeJSON(to w: inout JSONWriter, protobuf check: ProtobufCheck?, idAt: inout Int) {
        let info = summary.info
        // Each endpoint's text made once (digit by digit, as the times), written three times.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 * Endpoint.maxTextLength) { text in
            let clientEnd = info.client.write(into: text, at: 0), serverEnd = info.server.write(into: text, at: clientEnd)
            let client = UnsafeRawBufferPointer(start: text.baseAddress, count: clientEnd)
            let server = UnsafeRawBufferPointer(start: text.baseAddress! + clientEnd, count: serverEnd - clientEnd)
            w.compact { w in
                w.object { w in
                    w.key("client")
                    w.plainString(client)
                    w.key("directions")
                    // Each direction's figures borrowed where they lie: a copy retains every box they hold.
                    w.array { w in
                        w.member { w in writeDirection(.clientToServer, figures.clientToServer, from: client, to: server, check: check, to: &w) }
                        w.member { w in writeDirection(.serverToClient, figures.serverToClient, from: server, to: client, check: check, to: &w) }
                    }
                    w.field("dissector", spec?.name)
                    w.field("end", literal: summary.end.literal)
                    w.field("firstFrame", info.firstFrame)
                    w.field("firstTime", info.firstSeen)
                    w.key("id")
                    idAt = w.position
                    w.int(info.id.rawValue)
                    if let rtt = summary.initialRTTNanoseconds { w.field("initialRTT", units: rtt, scale: 9) }
                    w.field("lastTime", summary.lastSeen)
                    w.key("server")
                    w.plainString(server)
                    w.field("start", literal: startLiteral)
                }
            }
        }
    }

    private func writeDirection(
        _ d: Direction, _ a: borrowing DirectionAnalysis, from: UnsafeRawBufferPointer, to: UnsafeRawBufferPointer, check: ProtobufCheck?,
        to w: inout JSONWriter
    ) {
        let stats = summary[d]
        let typed = spec?.hasTypeField == true  // (the types are counted only then: no dictionary to build otherwise)
        w.object { w in
            w.field("bytes", stats.bytes)
            w.key("figures")
            writeFigures(a, segments: stats.segments + a.recutSegments, check: check, to: &w)
            w.key("from")
            w.plainString(from)
            w.field("gapBytes", stats.gapBytes)
            if typed, let types = mergedTypes(a, d) { w.field("mergedTypes", counts: types) }
            if typed, let types = messageTypes(a, d) { w.field("messageTypes", counts: types) }
            if typed, let types = partialTypes(a, d) { w.field("partialTypes", counts: types) }
            writeTCP(d, to: &w)
            if !a.timeline.isEmpty {
                w.key("timeline")
                Self.write(a.timeline, to: &w)
            }
            w.key("to")
            w.plainString(to)
        }
    }

    /// The causes in name order, as `field(_:counts:)` writes their dictionary, without building
    /// it (a dictionary per direction was a tenth of the listing).
    private static func write(_ key: StaticString, _ causes: CauseCounts, to w: inout JSONWriter) {
        w.key(key)
        w.object { w in
            for cause in causesByName where causes[cause] > 0 {
                w.key(named: cause.description)
                w.int(causes[cause])
            }
        }
    }

    /// A direction's timeline, the fields of `AnalysisReport.Timeline` (what the human formats
    /// draw), written straight from its counts: no arrays, and the bucket width without
    /// `Double.description`.
    private static func write(_ t: EventTimeline, to w: inout JSONWriter) {
        let buckets = t.bucketsInUse
        func series(_ key: StaticString, _ kind: EventTimeline.Kind, _ w: inout JSONWriter) {
            w.key(key)
            w.naturals(count: buckets) { t.count(kind, inBucket: $0) }
        }
        w.object { w in
            w.field("bucketSeconds", units: t.bucketNanoseconds, scale: 9)
            series("malformed", .malformed, &w)
            series("merged", .merged, &w)
            w.field("origin", t.origin)
            series("partial", .partial, &w)
        }
    }

    private static let causesByName = SplitCause.allCases.sorted { $0.description < $1.description }

    /// The reasons counted, in name order, as `field(_:counts:)` writes their dictionary, without
    /// building it (two dictionaries and a sort per direction with invalid bodies: a third of
    /// listing 1,000 connections of them).
    private static func write<Reason: CountedReason & RawRepresentable<String>>(
        _ key: StaticString, _ counts: ReasonCounts<Reason>, in byName: [Reason], to w: inout JSONWriter
    ) {
        w.key(key)
        w.object { w in
            for reason in byName {
                guard let n = counts[reason] else { continue }
                w.key(named: reason.rawValue)
                w.int(n)
            }
        }
    }

    private static let malformedByName = MalformedReason.allCases.sorted { $0.rawValue < $1.rawValue }
    private static let failuresByName = ProtobufFailure.allCases.sorted { $0.rawValue < $1.rawValue }

    /// `Figures(a, segments:, protobuf:).write(sparse: true)`, without building `Figures`.
    private func writeFigures(_ a: borrowing DirectionAnalysis, segments: Int, check: ProtobufCheck?, to w: inout JSONWriter) {
        // Most directions of a many-connection capture counted nothing: `{}` without the checks below.
        guard segments != 0 || !a.isBlank else { return w.object { _ in } }
        w.object { w in
            func counter(_ key: StaticString, _ value: Int64) {
                if value != 0 { w.field(key, value) }
            }
            func counter(_ key: StaticString, _ value: Int) { counter(key, Int64(value)) }
            func share(_ key: StaticString, _ value: Double) {  // a percentage to one decimal
                if value != 0 {
                    w.key(key)
                    w.tenths(value)
                }
            }
            func pairs(_ key: StaticString, _ h: CountHistogram) {
                guard !h.isEmpty else { return }
                w.key(key)
                w.array { w in h.forEachNonZero { value, n in w.pair(Int64(value), Int64(n)) } }
            }
            if a.assemblyLatencyMicroseconds.maximum > 0 {
                w.key("assemblyLatency")
                AnalysisReport.Distribution.writeMicroseconds(a.assemblyLatencyMicroseconds, to: &w)
            }
            counter("boundariesNotFound", a.boundariesNotFound)
            if let bits = a.boundaryEvidenceBits {
                w.key("boundaryEvidenceBits")
                w.tenths(oneDecimal(bits))
            }
            counter("damagedByGaps", a.damagedByGaps)
            counter("incompleteAtEnd", a.incompleteAtEnd)
            counter("incompleteBytes", a.incompleteBytes)
            counter("leadingBytes", a.leadingBytes)
            counter("malformed", a.malformed)
            if !a.malformedByReason.isEmpty { Self.write("malformedByReason", a.malformedByReason, in: Self.malformedByName, to: &w) }
            counter("maxMessagesPerSegment", a.messagesPerSegment.maximum)
            counter("maxSegmentsPerMessage", a.segmentsPerMessage.maximum)
            if a.mergedSegments > 0 { Self.write("mergedCauses", a.mergedCauses, to: &w) }
            share("mergedPercent", percent(a.mergedSegments, of: segments))
            counter("mergedSegments", a.mergedSegments)
            counter("messageBytes", a.messageBytes)
            if a.messages > 0 {
                w.key("messageSize")
                AnalysisReport.Distribution(sizes: a.sizes).write(to: &w)
                w.key("messageSizeBins")
                w.array { w in a.sizes.forEachPowerOfTwoBin { w.pair($0, Int64($1)) } }
            }
            counter("messages", a.messages)
            pairs("messagesPerSegment", a.messagesPerSegment)
            counter("naiveReaderLoss", a.naiveReaderLoss)
            share("naiveReaderLossPercent", percent(a.naiveReaderLoss, of: a.messages))
            if a.partialMessages > 0 { Self.write("partialCauses", a.partialCauses, to: &w) }
            counter("partialMessages", a.partialMessages)
            share("partialPercent", percent(a.partialMessages, of: a.messages))
            counter("preambleBytes", a.preambleBytes)
            if let check, a.protobufChecked > 0 {
                w.key("protobuf")
                w.object { w in
                    w.field("checked", a.protobufChecked)
                    if let schema = check.schema, schema.countBy != nil {
                        w.field("counts", counts: Dictionary(a.protobufCounts.map { (schema.countLabel($0.key), $0.value) }, uniquingKeysWith: +))
                    }
                    // Like the figures around it, without what is 0 or empty (most bodies are valid).
                    if a.protobufInvalid > 0 {
                        w.field("invalid", a.protobufInvalid)
                        Self.write("invalidByReason", a.protobufInvalidByReason, in: Self.failuresByName, to: &w)
                        w.field("invalidPercent", percent(a.protobufInvalid, of: a.protobufChecked))
                    }
                }
            }
            counter("resyncs", a.resyncs)
            counter("segments", segments)
            counter("segmentsOverMSS", a.segmentsOverMSS)
            pairs("segmentsPerMessage", a.segmentsPerMessage)
            if a.stopped { w.field("stopped", true) }
            counter("undissectedBytes", a.undissectedBytes)
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
