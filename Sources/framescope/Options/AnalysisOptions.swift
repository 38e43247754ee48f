import ArgumentParser
import FramescopeCore

extension MidStreamFraming: ExpressibleByArgument {}

/// Everything that shapes an analysis, shared by `analyze` and `watch`.
struct AnalysisOptions: ParsableArguments {
    @OptionGroup var dissectors: DissectorOptions
    @OptionGroup(title: "Protobuf bodies") var protobuf: ProtobufOptions
    @OptionGroup(title: "Reassembly limits") var limits: LimitOptions

    @Option(help: ArgumentHelp("Also write one JSON line per message to this file.", valueName: "file.ndjson"))
    var messages: String?

    @Option(
        help: ArgumentHelp(
            "Connections listed in the report at most; older finished ones are only counted in the totals.",
            discussion: "Default: 100000 for analyze, 1000 for watch (a long live capture keeps bounded memory)."))
    var maxListedConnections: Int?

    @Option(help: ArgumentHelp("Bytes all resynchronisation windows may hold together.", valueName: "size"))
    var maxResyncMemory: ByteSize = ByteSize(32 << 20)

    @Option(
        help: ArgumentHelp(
            "Where framing starts in a connection picked up mid-stream: search or start.",
            discussion: """
                search (default): at the first message boundary found with enough evidence; the bytes before it are \
                leading bytes (the tail of a message sent before the capture began). start: at the first captured byte, \
                as if a message began there.
                """, valueName: "mode"))
    var midStream: MidStreamFraming = .search

    @Option(
        help: ArgumentHelp(
            "Evidence, in bits, a message boundary found by recovery needs (mid-stream, after junk or a gap).",
            discussion: "Default 32: no false boundary in 10,000 random streams. Lower finds more and risks false messages.",
            valueName: "bits"))
    var minEvidence = RecoveryBudget.defaultThreshold

    func validate() throws {
        if let maxListedConnections, maxListedConnections < 1 { throw ValidationError("--max-listed-connections must be at least 1") }
        if !(minEvidence >= 1 && minEvidence <= 1000) { throw ValidationError("--min-evidence must be 1…1000 bits") }
    }
}
