import ArgumentParser
import FramescopeCore

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

    func validate() throws {
        if let maxListedConnections, maxListedConnections < 1 { throw ValidationError("--max-listed-connections must be at least 1") }
    }
}
