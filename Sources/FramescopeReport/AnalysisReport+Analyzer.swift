import FramescopeCore

/// The report built from a finished analysis: totals, warnings and evidence.
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
