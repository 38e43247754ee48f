import ArgumentParser
import FramescopeCapture
import FramescopeCore
import FramescopeReport

#if canImport(Glibc)
import Glibc
#endif

/// Inputs shared by every command that reads captures.
struct InputOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("pcap or pcapng files, read in order; '-' reads standard input.", valueName: "file"))
    var files: [String]

    @Option(name: .long, help: ArgumentHelp("Only packets matching this BPF expression (compiled by libpcap).", valueName: "expression"))
    var filter: String?

    @Option(name: [.customShort("c"), .long], help: "Stop after this many packets (counted after the filter).")
    var count: Int?

    @Flag(name: .long, help: "No progress display on standard error.")
    var quiet = false

    @Option(
        name: [.customShort("t"), .customLong("threads")],
        help: ArgumentHelp(
            "Threads: 1 reads and analyzes on one; N > 1 reads with libpcap on one and analyzes on the others (analyze: shares the connections out among N − 1, the reading thread taking a quarter when N is 2). Results are identical. Default: the machine's cores.",
            valueName: "n"))
    var threadsGiven: Int?

    /// `--threads`, or the machine's online cores (on one, a second thread would only add the
    /// hand-over's cost: sharding takes 8% more instructions than one table).
    var threads: Int { threadsGiven ?? max(1, min(256, sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// `--filter` compiled by libpcap; a bad expression is a usage error.
    func packetFilter() throws -> PacketFilter? {
        guard let filter else { return nil }
        do { return try PacketFilter(expression: filter) } catch { throw ValidationError(error.description) }
    }

    func validate() throws {
        if files.isEmpty { throw ValidationError("give at least one capture file, or '-' for standard input") }
        if let count, count <= 0 { throw ValidationError("--count must be a positive number of packets") }
        if files.filter({ $0 == "-" }).count > 1 { throw ValidationError("standard input ('-') can be read only once") }
        if let threadsGiven, threadsGiven < 1 || threadsGiven > 256 { throw ValidationError("--threads is 1 to 256") }
    }
}

/// Memory and time limits of reassembly.
struct LimitOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Out-of-order bytes buffered per direction before a hole is skipped as a gap.", valueName: "size"))
    var maxBufferPerDirection: ByteSize = ByteSize(4 << 20)

    @Option(help: ArgumentHelp("Out-of-order bytes buffered in all connections together.", valueName: "size"))
    var maxBufferTotal: ByteSize = ByteSize(64 << 20)

    @Option(help: "Connections tracked at once; past it the least recently active are finalized.")
    var maxConnections: Int = 1 << 20

    @Option(help: ArgumentHelp("Finalize a connection idle this many seconds (capture time).", valueName: "seconds"))
    var idleTimeout: Double = 600

    @Option(help: ArgumentHelp("Finalize a closed connection (FIN both ways, or RST) idle this many seconds.", valueName: "seconds"))
    var closedTimeout: Double = 60

    @Option(help: "Closed connections kept at once to wait out --closed-timeout; past it the least recently active are finalized.")
    var maxClosedConnections: Int = 4096

    @Option(help: ArgumentHelp("Recent bytes per direction that retransmitted copies are compared with (conflicts); 0 = off.", valueName: "size"))
    var conflictWindow: ByteSize = ByteSize(256)

    var reassembly: ReassemblyOptions {
        var options = ReassemblyOptions()
        options.maxBufferedBytesPerDirection = maxBufferPerDirection.bytes
        options.maxBufferedBytesTotal = maxBufferTotal.bytes
        options.maxConnections = maxConnections
        options.idleTimeout = Int64(idleTimeout * 1e9)
        options.closedTimeout = Int64(closedTimeout * 1e9)
        options.maxClosedConnections = maxClosedConnections
        options.conflictWindow = conflictWindow.bytes
        return options
    }

    func validate() throws {
        if maxConnections < 1 { throw ValidationError("--max-connections must be at least 1") }
        if idleTimeout <= 0 { throw ValidationError("--idle-timeout must be positive") }
        if closedTimeout <= 0 { throw ValidationError("--closed-timeout must be positive") }
        if maxClosedConnections < 1 { throw ValidationError("--max-closed-connections must be at least 1") }
    }
}

/// A size such as `4096`, `64K`, `4MiB` or `1G` (binary units).
struct ByteSize: ExpressibleByArgument, Sendable {
    var bytes: Int
    init(_ bytes: Int) { self.bytes = bytes }

    init?(argument: String) {
        guard let bytes = parseSize(argument) else { return nil }
        self.bytes = bytes
    }

    var defaultValueDescription: String { "\(bytes)" }
}

enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json, markdown, html
}

/// `--format` and `--output` of the report commands.
struct OutputOptions: ParsableArguments {
    @Option(help: "Output format.")
    var format: OutputFormat = .text

    @Option(name: [.customShort("o"), .long], help: "Write the report to this file instead of standard output.")
    var output: String?

    /// An unwritable destination fails before the analysis, not after it.
    func validate() throws {
        guard let output else { return }
        do { try OutputFile.check(output) } catch { throw ValidationError("--output: \(error)") }
    }

    /// A JSON report listing every connection, opened before the analysis so that each
    /// connection goes into it as it finishes (`ReportStream`); nil for the other formats and
    /// listings.
    func openStreamedReport(listing scope: ConnectionListing.Scope) throws -> StreamedReport? {
        guard format == .json && scope == .all else { return nil }
        let destination = try JSONDestination(output)
        return StreamedReport(destination: destination, stream: ReportStream(fd: destination.fd))
    }

    /// Writes the analysis report, streaming its JSON (a report can hold 50,000 connections), or
    /// completes the one `streamed` began.
    func write(_ report: AnalysisReport, streamed: StreamedReport? = nil) throws {
        if let streamed { return try streamed.finish(report) }
        switch format {
        case .text: try emit(AnalysisTextFormatter.render(report), to: output)
        case .markdown: try emit(AnalysisMarkdownFormatter.render(report), to: output)
        case .html: try emit(AnalysisHTMLFormatter.render(report), to: output)
        case .json: try writeJSON(to: output) { report.write(to: &$0) }
        }
    }

    /// Writes the flows report (it has no Markdown or HTML form: those print the text).
    func write(_ report: FlowsReport) throws {
        switch format {
        case .json: try writeJSON(to: output) { report.write(to: &$0) }
        case .text, .markdown, .html: try emit(FlowsTextFormatter.render(report), to: output)
        }
    }
}
