import FramescopeCore

/// The report built from a finished analysis: totals, warnings and evidence.
extension AnalysisReport {
    /// - Parameter listing: the finished connections as listed (without one, those the
    ///   analyzer kept, all in the JSON).
    public init(analyzer: Analyzer, flows: FlowsReport, choice: DissectorChoice, listing: ConnectionListing? = nil) {
        inputs = flows.inputs
        packets = flows.packets
        limits = flows.limits
        tcp = flows.tcp
        if analyzer.finished.dissected > 0 { responseTimes = ResponseTimesReport(analyzer.context.responseTimes, choice: choice) }
        dissectors = Dissectors(
            default: choice.byDefault?.text, defaultName: choice.byDefault?.name,
            byServerPort: Dictionary(uniqueKeysWithValues: choice.byServerPort.map { (String($0.key), $0.value.text) }))
        let analyses = listing?.worstFirst ?? analyzer.sortedConnections
        self.analyses = analyses
        self.listing = listing
        protobufCheck = analyzer.protobuf
        protobuf = analyzer.protobuf.map { check in
            Protobuf(
                mode: check.schema == nil ? "wire" : "schema", message: check.schema?.rootName, countBy: check.schema?.countBy?.name,
                scope: check.scope == .varintDelimited ? "varint" : "length-framed")
        }
        totals = Self.totals(analyzer: analyzer)
        let listed = listing.map { $0.scope == .all ? analyzer.finished.count : $0.scope == .worst ? analyses.count : 0 } ?? analyses.count
        totals.foldedConnections = totals.connections - listed
        let endpoints = analyzer.context.evidence.endpoints
        let original = Self.originalFrames(flows.inputs)
        var labels: [ConnectionID: ConnectionLabels] = [:]
        func label(_ id: ConnectionID) -> ConnectionLabels {
            if let known = labels[id] { return known }
            let made = ConnectionLabels(id, endpoints: endpoints[id], originalFrames: original)
            labels[id] = made
            return made
        }
        // By connection, each one's in the order found: the order of merged shards' reports too.
        events = analyzer.context.evidence.events.map { Event($0, labels: label($0.connection)) }
        eventsTotal = analyzer.context.evidence.total
        examples = analyzer.context.evidence.examples.map { Example($0, labels: label($0.connection)) }
        let sketches = Sketches(analyzer: analyzer, tcp: tcp, responseTimes: responseTimes)
        self.sketches = sketches
        warnings = Self.warnings(sketches, totals: totals, limits: flows.limits, inputs: flows.inputs, packets: flows.packets)
        if let first = analyzer.finished.firstSeen, let last = analyzer.finished.lastSeen { span = (first, last) }
    }

    /// Per direction and in all, over the finished connections and `open` ones, as every format
    /// shows them (the live view adds the connections still open); quantiles come from the fine
    /// histograms kept across all connections.
    public static func totals(analyzer: Analyzer, open: [ConnectionAnalysis] = []) -> Totals {
        var counted = analyzer.finished
        for a in open { counted.add(a) }
        var perDirection = counted.directions
        for d in Direction.allCases {
            perDirection[d].sizes = analyzer.context.sizes[d]
            perDirection[d].assemblyLatencyMicroseconds = analyzer.context.latencies[d]
        }
        var all = perDirection.clientToServer
        all.merge(perDirection.serverToClient)
        let check = analyzer.protobuf
        var up = Figures(perDirection.clientToServer, protobuf: check), down = Figures(perDirection.serverToClient, protobuf: check)
        var allFigures = Figures(all, protobuf: check)
        if let spec = analyzer.choice.onlySpec {
            up.addTypes(perDirection.clientToServer, latencies: analyzer.context.latencyByType.clientToServer, spec: spec, .clientToServer)
            down.addTypes(perDirection.serverToClient, latencies: analyzer.context.latencyByType.serverToClient, spec: spec, .serverToClient)
        }
        if let shadow = analyzer.asCaptured {
            var both = shadow.clientToServer
            both.merge(shadow.serverToClient)
            up.asCaptured = .init(Figures(shadow.clientToServer, protobuf: nil))
            down.asCaptured = .init(Figures(shadow.serverToClient, protobuf: nil))
            allFigures.asCaptured = .init(Figures(both, protobuf: nil))
        }
        return Totals(
            connections: counted.count, dissectedConnections: counted.dissected,
            foldedConnections: 0, undissectedConnectionBytes: counted.undissectedConnectionBytes,
            clientToServer: up, serverToClient: down, all: allFigures)
    }

    /// Adds a live capture's figures; drops go first among the warnings, because drops turn into gaps.
    public mutating func setCapture(_ capture: Capture) {
        self.capture = capture
        let drops = capture.kernelDrops + capture.interfaceDrops
        if capture.analysisDrops > 0 {
            warnings.insert(
                "analysis fell behind: \(counted(capture.analysisDrops, "packet")) dropped in framescope (captured"
                    + (capture.savedTo == nil ? "" : " and saved to \(capture.savedTo!)") + ", but not analysed): "
                    + "the rest of the \(counted(capture.shedConnections, "connection")) that lost a packet so was not analysed "
                    + "either, so the others are whole; "
                    + (capture.savedTo == nil ? "" : "analyze the file for every figure; ")
                    + "a larger --queue-size or a narrower --filter helps", at: 0)
        }
        if drops > 0 {
            warnings.insert(
                "the capture dropped \(counted(drops, "packet")) (kernel \(capture.kernelDrops), interface \(capture.interfaceDrops)): "
                    + "they show up as gaps and damaged messages; a larger --buffer-size or a narrower --filter helps", at: 0)
        }
    }

    /// What the reader should know before the figures, from what they were computed from (the
    /// same for a report merged from shards).
    static func warnings(_ sketches: Sketches, totals: Totals, limits: FlowsReport.Limits, inputs: [FlowsReport.Input], packets: FlowsReport.Packets) -> [String] {
        var out: [String] = []
        for input in inputs where input.error != nil { out.append("input broken: \(input.error!)") }
        if packets.cutBySnaplen > 0 {
            out.append(
                "the capture's snaplen cut \(counted(packets.cutBySnaplen, "TCP segment")) of \(packets.tcp) "
                    + "(\(counted(packets.bytesCutBySnaplen, "payload byte")) not captured): those bytes are gaps, and the messages they "
                    + "fall in are damaged rather than framed; capture whole packets (tcpdump -s 0) to see them")
        }
        let (over, mss, recut) = (sketches.segmentsOverMSS, sketches.recutMSS, sketches.recutSegments)
        if mss > 0 {
            out.append(
                "--mss \(mss): segments longer than \(counted(mss, "byte")) were framed as the wire carried them, which made "
                    + "\(counted(recut, "segment")) more; without it the figures describe the capture point")
        } else if over > 0 {
            out.append(
                "\(counted(over, "segment")) \(over == 1 ? "is larger than the MSS its" : "are larger than the MSS their") receiver announced: the capture was taken with segmentation "
                    + "offload (TSO/GSO or GRO/LRO) on, so partial/merged figures describe the capturing host's buffers, not the wire; "
                    + "run again with --mss N (the payload of a wire segment, e.g. 1448 for a 1460 MSS with TCP timestamps) for the wire's")
        }
        if limits.bufferLimitGaps + limits.connectionLimitEvictions > 0 {
            out.append("memory limits were reached (\(counted(limits.bufferLimitGaps, "hole")) skipped early, \(counted(limits.connectionLimitEvictions, "connection")) finalized early): figures are degraded there")
        }
        if sketches.recoveryExhausted > 0 {
            out.append("\(counted(sketches.recoveryExhausted, "direction")) gave up resynchronising because all resync windows together reached their limit")
        }
        if totals.connections > 0 && totals.dissectedConnections == 0 {
            out.append("no connection matched a dissector: give --dissector SPEC, or PORT=SPEC for the server port")
        }
        return out
    }
}
