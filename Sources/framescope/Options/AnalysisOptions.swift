import ArgumentParser
import FramescopeCore
import FramescopeReport

extension MidStreamFraming: ExpressibleByArgument {}
extension ConnectionListing.Scope: ExpressibleByArgument {}

/// Everything that shapes an analysis, shared by `analyze` and `watch`.
struct AnalysisOptions: ParsableArguments {
    @OptionGroup var dissectors: DissectorOptions
    @OptionGroup(title: "Protobuf bodies") var protobuf: ProtobufOptions
    @OptionGroup(title: "Reassembly limits") var limits: LimitOptions

    @Option(help: ArgumentHelp("Also write one JSON line per message to this file.", valueName: "file.ndjson"))
    var messages: String?

    @Option(help: "Connections the text, Markdown and HTML reports list: the worst, most problems first.")
    var top = 20

    @Option(
        help: ArgumentHelp(
            "Connections the JSON report lists: all (in ID order), worst (the --top worst) or none; the totals count all.",
            valueName: "which"))
    var connections: ConnectionListing.Scope = .all

    @Option(help: ArgumentHelp("Also write one JSON line per connection to this file, as each finishes.", valueName: "file.ndjson"))
    var connectionsNdjson: String?

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

    @Option(
        name: .customLong("mss"),
        help: ArgumentHelp(
            "Re-cut segments longer than this many bytes as the wire carried them, before framing.",
            discussion: """
                For captures taken with segmentation offload (TSO/GSO, GRO/LRO) on: the capture point saw super-segments \
                the wire never carried, so partial and merged counts describe the capturing host. Give the payload the \
                wire carries per segment (the MSS less the options, e.g. 1448 for a 1460 MSS with timestamps).
                """, valueName: "bytes"))
    var recutMSS: Int?

    func validate() throws {
        if top < 0 { throw ValidationError("--top must be 0 or more") }
        if let recutMSS, !(recutMSS >= 64 && recutMSS <= 65535) { throw ValidationError("--mss must be 64…65535 bytes") }
        if !(minEvidence >= 1 && minEvidence <= 1000) { throw ValidationError("--min-evidence must be 1…1000 bits") }
    }
}
