import ArgumentParser
import FramescopeCore
import FramescopeReport

extension Framescope {
    struct Infer: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "infer",
            abstract: "Infer each server port's framing: the SPEC to paste into --dissector or a protocol file.",
            discussion: """
                Samples the first bytes of up to 64 streams, tries every framing of the SPEC vocabulary (length \
                fields at offsets 0–32: binary 1–8 bytes either byte order, ASCII or hex digits, varint, BER, with \
                the adjustments that have a meaning; delimiters) and ranks them by evidence in bits: header bytes \
                every frame shares, frames starting where segments start, whole streams ending on a frame end, \
                protobuf bodies. Per port: the best SPEC with its magic and type field, its confidence, the \
                runner-up and the margin, AMBIGUOUS when two framings fit nearly as well, or why nothing fits.
                """)

        @OptionGroup var input: InputOptions
        @OptionGroup(title: "Reassembly limits") var limits: LimitOptions

        @Option(help: ArgumentHelp("Evidence, in bits, a framing needs to be chosen.", valueName: "bits"))
        var minEvidence = RecoveryBudget.defaultThreshold

        @Option(help: "Output format: text or json.")
        var format: OutputFormat = .text

        @Option(name: [.customShort("o"), .long], help: "Write to this file instead of standard output.")
        var output: String?

        func validate() throws {
            if format != .text && format != .json { throw ValidationError("--format is text or json") }
            if !(minEvidence >= 1 && minEvidence <= 1000) { throw ValidationError("--min-evidence must be 1…1000 bits") }
        }

        func run() throws {
            let ports = try inferFraming(input: input, limits: limits, minimumEvidence: minEvidence)
            switch format {
            case .json: try writeJSON(to: output) { InferenceReport(ports: ports, minimumEvidence: minEvidence).write(to: &$0) }
            default: try emit(InferenceTextFormatter.render(ports), to: output)
            }
        }
    }
}
