import FramescopeCapture
import FramescopeCore

/// `--dissector auto`: a sampling pass over the first packets, then per server port the SPEC
/// inference chose, said on standard error. Ports whose streams fit no framing are left
/// undissected, and said so.
func inferDissectors(input: InputOptions, limits: LimitOptions) throws -> [UInt16: DissectorSpec] {
    if input.files.contains("-") { throw Failure(message: "--dissector auto reads the capture twice: give a file, not standard input") }
    let sampled = try sampleStreams(InferenceSampler(), input: input, limits: limits, packetLimit: 400_000)
    var chosen: [UInt16: DissectorSpec] = [:]
    for choice in FramingInference.choose(sampled.byServerPort) {
        let port = choice.port
        guard let best = choice.chosen else {
            let best = choice.candidates.first.map { "best \($0.spec) at \(percentText($0.score))" } ?? "too few segments to tell"
            writeError("framescope: --dissector auto: port \(port): no framing fits (\(best)); give --dissector \(port)=SPEC\n")
            continue
        }
        var line = "framescope: --dissector auto: port \(port): '\(best.spec)' (score \(percentText(best.score)) over \(choice.streams) streams)"
        if choice.candidates.count > 1 { line += "; runner-up '\(choice.candidates[1].spec)' (\(percentText(choice.candidates[1].score)))" }
        writeError(line + "\n")
        var spec = try DissectorSpec(parsing: best.spec)
        spec.name = "auto: \(best.spec)"
        chosen[port] = spec
    }
    guard !chosen.isEmpty else { throw Failure(message: "--dissector auto found no framing that fits; give --dissector SPEC") }
    return chosen
}

/// A second pass over the files that keeps the first bytes of streams (for `auto`, and for the
/// SPECs next to a failing one).
func sampleStreams(_ sampler: InferenceSampler, input: InputOptions, limits: LimitOptions, packetLimit: Int?) throws -> InferenceSampler {
    var table = FlowTable(sink: sampler, options: limits.reassembly)
    var reader = CaptureReader(paths: input.files, filter: try input.packetFilter(), packetLimit: packetLimit)
    reader.read { info, bytes in table.process(bytes, info: info) }
    table.finish()
    return table.sink
}

private func percentText(_ share: Double) -> String {
    "\(Double(Int((share * 1000).rounded())) / 10)%"
}
