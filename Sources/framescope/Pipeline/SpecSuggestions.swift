import FramescopeCore
import FramescopeReport

/// After an analysis that found malformed headers under a length-field SPEC, or a message still
/// open where a direction ended (a wrong SPEC without a magic chains through anything): a second
/// pass over the files that keeps the first 256 KiB of up to 8 of those directions, and the SPEC
/// next to the given one that frames each cleanly, if there is one (`SpecVariations`).
func suggestSpecs(
    for candidates: [(analysis: ConnectionAnalysis, direction: Direction)], input: InputOptions, limits: LimitOptions
) throws -> [AnalysisReport.SpecSuggestion] {
    if input.files.contains("-") { return [] }  // standard input cannot be read twice
    let targets = candidates.compactMap { c -> (analysis: ConnectionAnalysis, direction: Direction, dissector: LengthFieldDissector)? in
        guard case .lengthField(let d)? = c.analysis.spec?.kind else { return nil }
        return (c.analysis, c.direction, d)
    }
    guard !targets.isEmpty else { return [] }
    let sampler = InferenceSampler(
        bytesPerDirection: 256 << 10, directions: 16, only: Set(targets.map { $0.analysis.summary.info.id }),
        awaiting: targets.map { ($0.analysis.summary.info.id, $0.direction) })
    let samples = try sampleStreams(sampler, input: input, limits: limits, packetLimit: input.count).samples
    return targets.compactMap { target in
        let id = target.analysis.summary.info.id
        guard let sample = samples.first(where: { $0.connection == id.rawValue && $0.direction == target.direction }),
            let found = SpecVariations.suggest(target.dissector, sample: sample.bytes, segmentStarts: sample.segmentStarts, whole: sample.complete)
        else { return nil }
        let info = target.analysis.summary.info
        let (from, to) = target.direction == .clientToServer ? (info.client, info.server) : (info.server, info.client)
        return AnalysisReport.SpecSuggestion(
            connection: id.rawValue, from: from.description, to: to.description, found, wholeStream: sample.complete)  // a whole sample is framed to its end
    }
}
