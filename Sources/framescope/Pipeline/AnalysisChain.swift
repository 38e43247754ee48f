import ArgumentParser
import FramescopeCore
import FramescopeReport

#if canImport(Glibc)
import Glibc
#endif

/// The analysis both `analyze` and `watch` run, built one way from `AnalysisOptions`: the sink
/// the flow table feeds (analyzer and flow statistics), then the finished sink as a report.
struct AnalysisChain {
    typealias Sink = SinkPair<Analyzer, FlowsCollector>

    let choice: DissectorChoice
    private(set) var sink: Sink
    /// Finished connections as the report lists them: the analyzer keeps none.
    let listing: ConnectionListing
    /// With `listsOffThread`: where finished connections go on their way to `listing`.
    private let listingThread: ListingThread?
    private let messages: MessageWriter?
    private let connectionLines: OutputFile?

    /// - Parameters:
    ///   - format: the report's (JSON spills every connection it lists to a temporary file).
    ///   - share: this chain's part of a capture's connections, when several analyze them apart
    ///     (`ShardedPipeline`): it gets that part of the resynchronisation memory, and none writes
    ///     a file as it goes.
    ///   - listsOffThread: build the listing on a thread of its own (`ListingThread`).
    ///   - report: the JSON report being written, which takes each connection as it finishes.
    ///   - shardLines: a shard's, where its connections' lines go for the report (`ShardedLines`).
    init(
        options: AnalysisOptions, choice: DissectorChoice, format: OutputFormat, export: MessageExport? = nil, share: Double? = nil,
        listsOffThread: Bool = false, report: ReportStream? = nil, shardLines: ShardLines? = nil
    ) throws {
        self.choice = choice
        let check = try options.protobuf.check(for: choice)
        var analyzer = Analyzer(
            choice: choice, protobuf: check, maxRecoveryBytes: Int(Double(options.maxResyncMemory.bytes) * (share ?? 1)), midStream: options.midStream,
            evidenceBits: options.minEvidence, recutMSS: options.recutMSS ?? 0)
        analyzer.maxRetainedConnections = 0
        analyzer.export(export)
        connectionLines = share != nil ? nil : try options.connectionsNdjson.map(createFile)
        let top = format == .json && options.connections != .worst ? 0 : options.top
        do {
            listing = try ConnectionListing(
                scope: options.connections, top: top, protobuf: check, spillAll: format == .json && options.connections == .all,
                ndjsonFD: connectionLines?.fd, shardLines: shardLines, report: report)
        } catch { throw Failure(message: "\(error)") }
        let listing = listing
        if listsOffThread {
            let thread = ListingThread(listing)
            listingThread = thread
            analyzer.onConnection = { thread.add($0) }
        } else {
            listingThread = nil
            analyzer.onConnection = { listing.add($0) }
        }
        messages = share != nil ? nil : try options.messages.map { try MessageWriter(path: $0) }
        if let messages { analyzer.onMessage = { messages.write($0) } }
        sink = SinkPair(analyzer, FlowsCollector(retainSummaries: false))
    }

    /// The report on a finished run of `sink` (the flow table's own after `finish`).
    func report(of finished: Sink, decode: DecodeStatistics, context: ReassemblyContext, inputs: [FlowsReport.Input]) throws -> AnalysisReport {
        listingThread?.finish()
        try messages?.close()
        if let connectionLines {
            guard listing.finishStream() else { throw Failure(message: "\(connectionLines.path): write failed") }
            try commit(connectionLines)
        }
        let flows = FlowsReport(collector: finished.second, decode: decode, context: context, inputs: inputs)
        return AnalysisReport(analyzer: finished.first, flows: flows, choice: choice, listing: listing)
    }
}
