/// `framescope.report/2` written as a stream (keys in sorted order, as in docs/report.schema.json).
extension AnalysisReport {
    public func write(to w: inout JSONWriter) {
        w.object { w in
            if let capture {
                w.key("capture")
                w.object { w in
                    w.field("durationSeconds", capture.durationSeconds)
                    if let filter = capture.filter { w.field("filter", filter) }
                    w.field("interface", capture.interface)
                    w.field("interfaceDrops", capture.interfaceDrops)
                    w.field("kernelDrops", capture.kernelDrops)
                    w.field("packetsCaptured", capture.packetsCaptured)
                    w.field("packetsReceived", capture.packetsReceived)
                    if let savedTo = capture.savedTo { w.field("savedTo", savedTo) }
                }
            }
            w.key("connections")
            switch listing?.scope {
            case .all?: w.array { w in listing!.writeAll(to: &w) }
            case .nothing?: w.array { _ in }
            case .worst?, nil: w.array(connections) { w, c in c.write(to: &w) }
            }
            w.key("dissectors")
            w.object { w in
                w.key("byServerPort")
                w.object { w in
                    for (port, spec) in dissectors.byServerPort.sorted(by: { $0.key < $1.key }) {
                        w.key(port)
                        w.string(spec)
                    }
                }
                if let d = dissectors.default { w.field("default", d) }
                if let n = dissectors.defaultName { w.field("defaultName", n) }
            }
            w.key("events")
            w.array(events) { w, e in e.write(to: &w) }
            w.field("eventsTotal", eventsTotal)
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
            w.field("schema", schema)
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
        }
    }
}

extension AnalysisReport.Connection {
    /// One connection, on one line (a report lists tens of thousands; `--connections-ndjson`
    /// writes the same lines). Its figures leave out what is zero.
    public func write(to w: inout JSONWriter) {
        w.compact { w in self.writeObject(to: &w) }
    }

    private func writeObject(to w: inout JSONWriter) {
        w.object { w in
            w.field("client", client)
            w.key("directions")
            w.array(directions) { w, d in d.write(to: &w) }
            w.field("dissector", dissector)
            w.field("end", end)
            w.field("firstTime", firstTime)
            w.field("id", id)
            w.field("lastTime", lastTime)
            w.field("server", server)
            w.field("start", start)
        }
    }
}

extension AnalysisReport.DirectionReport {
    func write(to w: inout JSONWriter) {
        w.object { w in
            w.field("bytes", bytes)
            w.key("figures")
            figures.write(to: &w, sparse: true)
            w.field("from", from)
            w.field("gapBytes", gapBytes)
            if let messageTypes { w.field("messageTypes", counts: messageTypes) }
            if let timeline {
                w.key("timeline")
                w.object { w in
                    w.field("bucketSeconds", timeline.bucketSeconds)
                    w.key("malformed")
                    w.array(timeline.malformed) { w, v in w.int(v) }
                    w.key("merged")
                    w.array(timeline.merged) { w, v in w.int(v) }
                    w.field("origin", timeline.origin)
                    w.key("partial")
                    w.array(timeline.partial) { w, v in w.int(v) }
                }
            }
            w.field("to", to)
        }
    }
}

extension AnalysisReport.Figures {
    /// Every figure; `sparse` (a connection's) leaves out those that are 0, empty, false or
    /// null, so that a quiet connection costs a few bytes.
    func write(to w: inout JSONWriter, sparse: Bool = false) {
        w.object { w in
            func counter(_ key: StaticString, _ value: Int64) {
                if !sparse || value != 0 { w.field(key, value) }
            }
            func counter(_ key: StaticString, _ value: Int) { counter(key, Int64(value)) }
            func percent(_ key: StaticString, _ value: Double) {
                if !sparse || value != 0 { w.field(key, value) }
            }
            if !sparse || assemblyLatency.max > 0 {
                w.key("assemblyLatency")
                assemblyLatency.write(to: &w)
            }
            counter("boundariesNotFound", boundariesNotFound)
            if !sparse || boundaryEvidenceBits != nil {
                w.key("boundaryEvidenceBits")
                if let boundaryEvidenceBits { w.double(boundaryEvidenceBits) } else { w.null() }
            }
            counter("damagedByGaps", damagedByGaps)
            counter("incompleteAtEnd", incompleteAtEnd)
            counter("incompleteBytes", incompleteBytes)
            counter("leadingBytes", leadingBytes)
            counter("malformed", malformed)
            if !sparse || !malformedByReason.isEmpty { w.field("malformedByReason", counts: malformedByReason) }
            counter("maxMessagesPerSegment", maxMessagesPerSegment)
            counter("maxSegmentsPerMessage", maxSegmentsPerMessage)
            percent("mergedPercent", mergedPercent)
            counter("mergedSegments", mergedSegments)
            counter("messageBytes", messageBytes)
            if !sparse || messages > 0 {
                w.key("messageSize")
                messageSize.write(to: &w)
            }
            if !sparse || !messageSizeBins.isEmpty {
                w.key("messageSizeBins")
                w.array(messageSizeBins) { w, pair in w.array(pair) { w, v in w.int(v) } }
            }
            counter("messages", messages)
            if !sparse || !messagesPerSegment.isEmpty {
                w.key("messagesPerSegment")
                pairs(messagesPerSegment, &w)
            }
            counter("naiveReaderLoss", naiveReaderLoss)
            percent("naiveReaderLossPercent", naiveReaderLossPercent)
            counter("partialMessages", partialMessages)
            percent("partialPercent", partialPercent)
            counter("preambleBytes", preambleBytes)
            if let protobuf, !sparse || protobuf.checked > 0 {
                w.key("protobuf")
                w.object { w in
                    w.field("checked", protobuf.checked)
                    if let counts = protobuf.counts { w.field("counts", counts: counts) }
                    w.field("invalid", protobuf.invalid)
                    w.field("invalidByReason", counts: protobuf.invalidByReason)
                    w.field("invalidPercent", protobuf.invalidPercent)
                }
            }
            counter("resyncs", resyncs)
            counter("segments", segments)
            counter("segmentsOverMSS", segmentsOverMSS)
            if !sparse || !segmentsPerMessage.isEmpty {
                w.key("segmentsPerMessage")
                pairs(segmentsPerMessage, &w)
            }
            if !sparse || stopped { w.field("stopped", stopped) }
            counter("undissectedBytes", undissectedBytes)
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

extension AnalysisReport.Event {
    func write(to w: inout JSONWriter) {
        w.object { w in
            w.field("bytes", hex(bytes))
            w.field("connection", connection)
            if let evidenceBits { w.field("evidenceBits", evidenceBits) }
            if let failedAt { w.field("failedAt", failedAt) }
            if let failedInFrame { w.field("failedInFrame", failedInFrame) }
            w.field("frame", frame)
            w.field("from", from)
            w.field("kind", kind)
            w.field("length", length)
            if let looksLike { w.field("looksLike", looksLike) }
            w.field("offset", offset)
            if let reason { w.field("reason", reason) }
            w.field("time", time)
            w.field("to", to)
            w.field("wiresharkFilter", wiresharkFilter)
        }
    }
}
