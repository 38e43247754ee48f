import FramescopeCore

/// `framescope.report/4` written as a stream (keys in sorted order, as in docs/report.schema.json).
extension AnalysisReport {
    public func write(to w: inout JSONWriter) {
        Self.writeOpening(capture: capture, to: &w)
        writeRemainder(to: &w)
    }

    /// Completes the report `stream` began while the analysis ran (the connections it wrote as
    /// they finished); false when a write failed.
    public func finish(_ stream: ReportStream) -> Bool {
        precondition(capture == nil, "a streamed report has no capture section: its connections come first")
        stream.open()
        writeRemainder(to: &stream.writer)
        stream.writer.finish()
        return !stream.writer.failed
    }

    /// What comes before the first connection: `{`, a live capture's figures, `"connections" : [`.
    static func writeOpening(capture: Capture?, to w: inout JSONWriter) {
        w.beginObject()
        if let capture {
            w.key("capture")
            w.object { w in
                w.field("analysisDrops", capture.analysisDrops)
                w.field("durationSeconds", capture.durationSeconds)
                if !capture.files.isEmpty {
                    w.key("files")
                    w.array(capture.files) { w, f in w.string(f) }
                }
                if let filter = capture.filter { w.field("filter", filter) }
                w.field("interface", capture.interface)
                w.field("interfaceDrops", capture.interfaceDrops)
                w.field("kernelDrops", capture.kernelDrops)
                w.field("packetsCaptured", capture.packetsCaptured)
                w.field("packetsReceived", capture.packetsReceived)
                if let savedTo = capture.savedTo { w.field("savedTo", savedTo) }
                w.field("shedConnections", capture.shedConnections)
            }
        }
        w.key("connections")
        w.beginArray()
    }

    /// The connections not written yet, then every member after them and the closing `}`.
    private func writeRemainder(to w: inout JSONWriter) {
        if let mergedConnections {
            mergedConnections.write(to: &w)
        } else {
            switch listing?.scope {
            case .all?: listing!.writeAll(to: &w)
            case .nothing?: break
            case .worst?, nil: for a in analyses { w.member { a.writeJSON(to: &$0, protobuf: protobufCheck) } }
            }
        }
        w.endArray()
        w.key("dissectors")
        w.object { w in
            w.key("byServerPort")
            w.object { w in
                for (port, spec) in dissectors.byServerPort.sorted(by: { $0.key < $1.key }) {
                    w.key(named: port)
                    w.string(spec)
                }
            }
            if let d = dissectors.default { w.field("default", d) }
            if let n = dissectors.defaultName { w.field("defaultName", n) }
        }
        w.key("events")
        w.array(events) { w, e in e.write(to: &w) }
        w.field("eventsTotal", eventsTotal)
        w.key("examples")
        w.array(examples) { w, e in e.write(to: &w) }
        if !inference.isEmpty {
            w.key("inference")
            InferenceReport.write(inference, to: &w)
        }
        w.key("inputs")
        w.array(inputs) { w, input in input.write(to: &w) }
        w.key("limits")
        limits.write(to: &w)
        w.key("packets")
        packets.write(to: &w)
        if let protobuf {
            w.key("protobuf")
            w.object { w in
                if let countBy = protobuf.countBy { w.field("countBy", countBy) }
                if let message = protobuf.message { w.field("message", message) }
                w.field("mode", protobuf.mode)
                w.field("scope", protobuf.scope)
            }
        }
        if let responseTimes {
            w.key("responseTimes")
            responseTimes.write(to: &w)
        }
        w.field("schema", schema)
        if let sketches {
            w.key("sketches")
            sketches.write(to: &w)
        }
        w.key("specSuggestions")
        w.array(specSuggestions) { w, s in
            w.object { w in
                w.field("bytes", s.bytes)
                w.field("change", s.change)
                w.field("connection", s.connection)
                w.field("from", s.from)
                if let meaning = s.meaning { w.field("meaning", meaning) }
                w.field("messages", s.messages)
                w.field("spec", s.spec)
                w.field("to", s.to)
                w.field("wholeStream", s.wholeStream)
            }
        }
        if let tcp {
            w.key("tcp")
            tcp.write(to: &w)
        }
        w.key("totals")
        w.object { w in
            w.key("all")
            totals.all.write(to: &w)
            w.key("clientToServer")
            totals.clientToServer.write(to: &w)
            w.field("connections", totals.connections)
            w.field("dissectedConnections", totals.dissectedConnections)
            w.field("foldedConnections", totals.foldedConnections)
            w.key("serverToClient")
            totals.serverToClient.write(to: &w)
        }
        w.key("warnings")
        w.array(warnings) { w, text in w.string(text) }
        w.endObject()
    }
}

extension AnalysisReport.Figures {
    /// Every figure (the totals; a connection's are written by `ConnectionAnalysis.writeJSON`).
    func write(to w: inout JSONWriter) {
        w.object { w in
            if let asCaptured {
                w.key("asCaptured")
                w.object { w in
                    w.field("mergedCauses", counts: asCaptured.mergedCauses)
                    w.field("mergedPercent", asCaptured.mergedPercent)
                    w.field("mergedSegments", asCaptured.mergedSegments)
                    w.field("naiveReaderLoss", asCaptured.naiveReaderLoss)
                    w.field("naiveReaderLossPercent", asCaptured.naiveReaderLossPercent)
                    w.field("partialCauses", counts: asCaptured.partialCauses)
                    w.field("partialMessages", asCaptured.partialMessages)
                    w.field("partialPercent", asCaptured.partialPercent)
                    w.field("segments", asCaptured.segments)
                }
            }
            w.key("assemblyLatency")
            assemblyLatency.write(to: &w)
            w.key("assemblyLatencyBins")
            w.array(assemblyLatencyBins) { w, pair in w.array(pair) { w, v in w.int(v) } }
            if let assemblyLatencyByType {
                w.key("assemblyLatencyByType")
                w.object { w in
                    for (name, t) in assemblyLatencyByType.sorted(by: { $0.key < $1.key }) {
                        w.key(named: name)
                        w.object { w in
                            w.field("max", t.latency.max)
                            w.field("messages", t.messages)
                            w.field("p50", t.latency.p50)
                            w.field("p99", t.latency.p99)
                        }
                    }
                }
            }
            w.field("boundariesNotFound", boundariesNotFound)
            w.key("boundaryEvidenceBits")
            if let boundaryEvidenceBits { w.double(boundaryEvidenceBits) } else { w.null() }
            w.field("damagedByGaps", damagedByGaps)
            w.field("incompleteAtEnd", incompleteAtEnd)
            w.field("incompleteBytes", incompleteBytes)
            w.field("leadingBytes", leadingBytes)
            w.field("malformed", malformed)
            w.field("malformedByReason", counts: malformedByReason)
            w.field("maxMessagesPerSegment", maxMessagesPerSegment)
            w.field("maxSegmentsPerMessage", maxSegmentsPerMessage)
            w.field("mergedCauses", counts: mergedCauses)
            w.field("mergedPercent", mergedPercent)
            w.field("mergedSegments", mergedSegments)
            if let mergedTypes { w.field("mergedTypes", counts: mergedTypes) }
            w.field("messageBytes", messageBytes)
            w.key("messageSize")
            messageSize.write(to: &w)
            w.key("messageSizeBins")
            w.array(messageSizeBins) { w, pair in w.array(pair) { w, v in w.int(v) } }
            if let messageTypes { w.field("messageTypes", counts: messageTypes) }
            w.field("messages", messages)
            w.key("messagesPerSegment")
            pairs(messagesPerSegment, &w)
            w.field("naiveReaderLoss", naiveReaderLoss)
            w.field("naiveReaderLossPercent", naiveReaderLossPercent)
            w.field("partialCauses", counts: partialCauses)
            w.field("partialMessages", partialMessages)
            w.field("partialPercent", partialPercent)
            if let partialTypes { w.field("partialTypes", counts: partialTypes) }
            w.field("preambleBytes", preambleBytes)
            if let protobuf {
                w.key("protobuf")
                w.object { w in
                    w.field("checked", protobuf.checked)
                    if let counts = protobuf.counts { w.field("counts", counts: counts) }
                    w.field("invalid", protobuf.invalid)
                    w.field("invalidByReason", counts: protobuf.invalidByReason)
                    w.field("invalidPercent", protobuf.invalidPercent)
                }
            }
            w.field("resyncs", resyncs)
            w.field("segments", segments)
            w.field("segmentsOverMSS", segmentsOverMSS)
            w.key("segmentsPerMessage")
            pairs(segmentsPerMessage, &w)
            w.field("stopped", stopped)
            w.field("undissectedBytes", undissectedBytes)
        }
    }

    private func pairs(_ values: [[Int]], _ w: inout JSONWriter) {
        w.array(values) { w, pair in w.array(pair) { w, v in w.int(v) } }
    }
}

extension AnalysisReport.Distribution {
    func write(to w: inout JSONWriter) {
        w.object { w in
            w.field("max", max)
            w.field("min", min)
            w.field("p50", p50)
            w.field("p99", p99)
        }
    }
}

extension AnalysisReport.Example {
    func write(to w: inout JSONWriter) {
        w.object { w in
            w.field("cause", cause)
            w.field("connection", connection)
            w.field("count", count)
            w.field("firstFrame", firstFrame)
            w.field("from", from)
            w.field("kind", kind)
            w.field("lastFrame", lastFrame)
            w.field("length", length)
            w.field("offset", offset)
            w.field("time", time)
            w.field("to", to)
            w.field("wiresharkFilter", wiresharkFilter)
        }
    }
}

extension AnalysisReport.Event {
    /// Written at a pointer (`JSONWriter.memberBreak`, `JSONText`) in room made for all of it
    /// (`room`: its members, with strings of at most `stringLimit` bytes), the layout `field` gives:
    /// through `field`, a report's 10,000 events cost 43 M instructions after the analysis.
    /// A longer string, or one to escape, goes through the writer.
    func write(to w: inout JSONWriter) {
        w.beginObject()
        var at = w.room(Self.room)
        Self.member(#""bytes" : "#, &at, &w)
        if bytes.count <= Self.stringLimit / 3 {
            at = JSONText.hexString(bytes, at: at)
        } else {
            w.commit(at)
            w.hex(bytes)
            at = w.room(Self.room)
        }
        Self.member(#""connection" : "#, &at, &w)
        at = JSONText.integer(Int64(connection), at: at)
        if let evidenceBits {
            Self.member(#""evidenceBits" : "#, &at, &w)
            at = JSONText.shortest(evidenceBits, at: at)
        }
        if let failedAt {
            Self.member(#""failedAt" : "#, &at, &w)
            at = JSONText.integer(failedAt, at: at)
        }
        if let failedInFrame {
            Self.member(#""failedInFrame" : "#, &at, &w)
            at = JSONText.natural(failedInFrame, at: at)
        }
        Self.member(#""frame" : "#, &at, &w)
        at = JSONText.natural(frame, at: at)
        Self.member(#""from" : "#, &at, &w)
        Self.string(from, &at, &w)
        Self.member(#""kind" : "#, &at, &w)
        Self.string(kind, &at, &w)
        Self.member(#""length" : "#, &at, &w)
        at = JSONText.integer(length, at: at)
        if let looksLike {
            Self.member(#""looksLike" : "#, &at, &w)
            Self.string(looksLike, &at, &w)
        }
        Self.member(#""offset" : "#, &at, &w)
        at = JSONText.integer(offset, at: at)
        if let reason {
            Self.member(#""reason" : "#, &at, &w)
            Self.string(reason, &at, &w)
        }
        Self.member(#""time" : "#, &at, &w)
        at = w.epoch(timestamp, at: at)
        Self.member(#""to" : "#, &at, &w)
        Self.string(to, &at, &w)
        Self.member(#""wiresharkFilter" : "#, &at, &w)
        if let text = JSONText.plainText(connectionFilter, limit: Self.stringLimit, at: JSONText.byte(0x22, at: at)) {
            at = JSONText.byte(0x22, at: JSONText.natural(frame, at: JSONText.raw(" && frame.number == ", at: text)))
            w.commit(at)
        } else {
            w.commit(at)
            w.string(connectionFilter, then: " && frame.number == ", frame)
        }
        w.endObject()
    }

    /// (Helpers taking `at` and the writer as arguments: nested functions capturing them had every
    /// use checked for exclusivity at run time, 70 instructions each.)
    @inline(__always)
    private static func member(_ key: StaticString, _ at: inout UnsafeMutablePointer<UInt8>, _ w: inout JSONWriter) {
        at = JSONText.raw(key, at: w.memberBreak(at: at))
    }

    private static func string(_ text: String, _ at: inout UnsafeMutablePointer<UInt8>, _ w: inout JSONWriter) {
        if let end = JSONText.plainString(text, limit: stringLimit, at: at) { return at = end }
        w.commit(at)
        w.string(text)
        at = w.room(room)
    }

    private static let room = 3_072, stringLimit = 160
}
