import ArgumentParser
import FramescopeCore
import FramescopeReport

/// The analysis both `analyze` and `watch` run, built one way from `AnalysisOptions`: the sink
/// the flow table feeds (analyzer and flow statistics), then the finished sink as a report.
struct AnalysisChain {
    typealias Sink = SinkPair<Analyzer, FlowsCollector>

    let choice: DissectorChoice
    private(set) var sink: Sink
    private let messages: MessageWriter?

    /// - Parameter listedByDefault: connections listed when `--max-listed-connections` is not given.
    init(options: AnalysisOptions, choice: DissectorChoice, listedByDefault: Int) throws {
        self.choice = choice
        var analyzer = Analyzer(
            choice: choice, protobuf: try options.protobuf.check(for: choice), maxRecoveryBytes: options.maxResyncMemory.bytes,
            midStream: options.midStream, evidenceBits: options.minEvidence)
        analyzer.maxRetainedConnections = options.maxListedConnections ?? listedByDefault
        messages = try options.messages.map { try MessageWriter(path: $0) }
        if let messages { analyzer.onMessage = { messages.write($0) } }
        sink = SinkPair(analyzer, FlowsCollector(retainSummaries: false))
    }

    /// The report on a finished run of `sink` (the flow table's own after `finish`).
    func report(of finished: Sink, decode: DecodeStatistics, context: ReassemblyContext, inputs: [FlowsReport.Input]) throws -> AnalysisReport {
        try messages?.close()
        let flows = FlowsReport(collector: finished.second, decode: decode, context: context, inputs: inputs)
        return AnalysisReport(analyzer: finished.first, flows: flows, choice: choice)
    }
}
