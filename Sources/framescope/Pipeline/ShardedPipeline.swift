import FramescopeCapture
import FramescopeCore
import FramescopeReport

#if canImport(Glibc)
import Glibc
#endif

/// `analyze --threads N` past 1: this thread reads with libpcap and shares the connections out
/// among N − 1 workers (`readSharded`: a connection's packets all reach one) and, with one
/// worker, itself (`ShardPlan`), each shard with its own flow table and analysis; at the end
/// their figures, histograms, evidence and listings are combined and their connections numbered
/// as one table numbers them (by first frame). A JSON report listing every connection is
/// written as the run goes: the shards hand their lines over after each batch, and this thread
/// numbers them and writes them in (`ShardedLines`). The report is the one a single table gives
/// (`ShardedAnalysisTests`), as long as no limit shared out among the shards binds: each has
/// its part of `--max-buffer-total`, `--max-resync-memory`, the conflict windows' total and the
/// unacked segments', in proportion to the groups of connections it holds (the connection
/// limits hold per group, which a shard holds whole, so they bind as in one table).
struct ShardedPipeline {
    /// One shard: its analysis and table, reached only from its thread until the read ends.
    final class Shard: @unchecked Sendable {
        let chain: AnalysisChain
        /// (Unchecked: one thread at a time, and the dynamic exclusivity check per packet cost
        /// 12 M instructions in 100 MB of 1,000 varint flows at `-t 2`: 3% of the worker's, 1% of
        /// the reading thread's.)
        @exclusivity(unchecked) var table: FlowTable<AnalysisChain.Sink>
        /// Where its connections' lines go, for a JSON report listing every connection.
        let lines: ShardLines?

        init(chain: AnalysisChain, options: ReassemblyOptions, captureFiles: CaptureFiles, lines: ShardLines?) {
            self.chain = chain
            self.lines = lines
            table = FlowTable(sink: chain.sink, options: options, captureFiles: captureFiles)
            table.sweepsOnItsOwn = false
            table.recordsFirstFrames = true
        }

        /// What the read hands this shard goes to its table.
        var body: ShardBody {
            ShardBody(
                packet: { self.table.process($1, info: $0) }, sweep: { self.table.sweep(at: $0) },
                end: {
                    self.table.finish()
                    self.handOver(progress: .max, last: true)
                },
                caughtUp: { self.handOver(progress: $0) })
        }

        /// The lines written since the last hand-over, to the reading thread.
        func handOver(progress: UInt64, last: Bool = false) {
            lines?.handOver(firstFrames: table.firstFrames, progress: progress, last: last)
        }
    }

    let plan: ShardPlan
    let shards: [Shard]
    var reader: CaptureReader
    let options: ReassemblyOptions
    /// With a JSON report listing every connection: the shards' lines on their way into it.
    let lines: ShardedLines?

    /// Options a run must not shard under: what is written as the analysis goes (messages,
    /// connection lines, exported frames) comes in the capture's order from one table only.
    static func applies(threads: Int, analysis: AnalysisOptions, exporting: Bool) -> Bool {
        threads > 1 && analysis.messages == nil && analysis.connectionsNdjson == nil && !exporting
    }

    /// - Parameter report: the JSON report listing every connection, begun before the run (there
    ///   is one only for a JSON report of `--connections all`: `openStreamedReport`).
    init(input: InputOptions, analysis: AnalysisOptions, choice: DissectorChoice, format: OutputFormat, report: ReportStream?) throws {
        plan = ShardPlan(threads: input.threads)
        options = analysis.limits.reassembly
        let files = CaptureFiles(inputs: input.files.count)
        let shards = try (0..<plan.shards).map { [options, plan] k in
            let part = plan.share(ofShard: k)
            func share(_ limit: Int, atLeast least: Int) -> Int { max(least, Int(Double(limit) * part)) }
            var shared = options
            shared.maxBufferedBytesTotal = share(options.maxBufferedBytesTotal, atLeast: 1)
            shared.maxConflictWindowBytesTotal = share(options.maxConflictWindowBytesTotal, atLeast: 0)
            shared.maxUnackedSegments = share(options.maxUnackedSegments, atLeast: 1)
            let lines = report != nil ? ShardLines() : nil
            let chain = try AnalysisChain(options: analysis, choice: choice, format: format, share: part, shardLines: lines)
            return Shard(chain: chain, options: shared, captureFiles: files, lines: lines)
        }
        self.shards = shards
        do { lines = try report.map { try ShardedLines(shards: shards.compactMap(\.lines), report: $0) } } catch {
            throw Failure(message: "\(error)")
        }
        reader = CaptureReader(paths: input.files, filter: try input.packetFilter(), packetLimit: input.count)
        reader.captureFiles = files
        if !input.quiet && isatty(2) != 0 { reader.progress = Progress(paths: input.files).show }
    }

    /// Reads everything; returns the read errors.
    mutating func run() -> [CaptureError] {
        // (The reader's own shard, if it has one, is shard 0: after a hand-over to a worker it
        // has had every packet of its up to the frame just read.)
        let own = plan.readerBuckets > 0 ? shards[0] : nil, lines = lines
        reader.readSharded(
            plan: plan, shards: shards.map(\.body), sweeps: options,
            handedOver: { frame in
                guard let lines else { return }
                own?.handOver(progress: frame)
                lines.collect()
            },
            whileWorkersEnd: { lines?.collectUntilEveryShardEnds() })
        if reader.progress != nil { writeError("\r\u{1B}[K") }
        return reader.errors
    }

    var inputs: [FlowsReport.Input] { reader.inputs }

    /// The workers' analyses as one: the report, and the listing (its suggestion candidates).
    func report() throws -> (AnalysisReport, ConnectionListing) {
        // (Once: the tables hand their first frames over.)
        let numbering = ConnectionNumbering(firstFrames: shards.map { $0.table.takeFirstFrames() })
        let analyzer = Analyzer.combining(shards.enumerated().map { k, shard in
            (shard.table.sink.first, { ConnectionID(numbering.captureID(table: k, id: $0.rawValue)) })
        })
        var decode = DecodeStatistics(), context = ReassemblyContext(options: options)
        for shard in shards {
            decode.absorb(shard.table.decodeStatistics)
            context.absorb(shard.table.context)
        }
        let listing: ConnectionListing
        do { listing = try ConnectionListing.combining(shards.map(\.chain.listing), numbering: numbering, sharded: lines) } catch {
            throw Failure(message: "\(error)")
        }
        let flows = FlowsReport(collector: shards[0].table.sink.second, decode: decode, context: context, inputs: inputs)
        return (AnalysisReport(analyzer: analyzer, flows: flows, choice: shards[0].chain.choice, listing: listing), listing)
    }

}
