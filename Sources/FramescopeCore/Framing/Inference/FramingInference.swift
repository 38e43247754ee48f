#if canImport(Glibc)
import Glibc
#endif

/// Infers the framing of a server port's streams (`--dissector auto`, `framescope infer`).
///
/// Every framing of the SPEC vocabulary (`FramingCandidate`) is walked over the streams sampled
/// on the port, both directions and every connection together, and judged by the evidence its
/// walks leave (`FramingEvidence`): the header bytes every frame shares, frame starts on segment
/// starts, streams that end where a frame ends, protobuf bodies; a malformed header costs. A
/// stream picked up mid-stream is framed from the first boundary recovery finds for the
/// framing (`FrameChainScorer`, the scorer recovery uses). Framings that cut the same frames
/// everywhere are one answer, named by its plainest SPEC; a magic, a type field or a preamble is
/// then read off the frames. The answer says how sure it is: its evidence in bits, the margin
/// to the next different framing, a confidence, and `ambiguous` when the margin is small.
///
/// Stages keep it fast: a screen (16 frames of up to 8 streams) drops framings that break,
/// a sketch (64 frames of up to 12 streams) ranks the rest, and the best 24 framings are
/// judged on everything sampled.
public enum FramingInference {
    /// The first bytes of one direction, where its segments started, and whether the sample
    /// holds the whole stream (so it must end on a frame boundary).
    public struct Sample: Sendable {
        public var bytes: [UInt8]
        public var segmentStarts: [Int]
        public var complete: Bool
        /// Picked up without its SYN: the first byte need not start a message.
        public var midStream: Bool
        public var connection: Int
        public var direction: Direction

        public init(
            bytes: [UInt8], segmentStarts: [Int], complete: Bool, midStream: Bool = false, connection: Int = 0,
            direction: Direction = .clientToServer
        ) {
            self.bytes = bytes
            self.segmentStarts = segmentStarts
            self.complete = complete
            self.midStream = midStream
            self.connection = connection
            self.direction = direction
        }
    }

    /// One framing and what the streams say for it.
    public struct Candidate: Sendable, Equatable {
        public var spec: String
        /// Evidence for it against the bytes not being framed so, less its complexity, in bits.
        public var evidenceBits: Double
        /// The parts: header bytes shared by every frame, frame starts on segment starts,
        /// streams ending on a frame end, protobuf bodies (varint lengths).
        public var structureBits: Double
        public var alignmentBits: Double
        public var endBits: Double
        public var bodyBits: Double
        /// Share of the sampled bytes it frames (after any leading bytes).
        public var coverage: Double
        public var frames: Int
        public var streams: Int
        /// Malformed headers met (walks go on from the next boundary recovery finds).
        public var malformedHeaders: Int
        /// Streams seen whole, and those of them that end where a frame ends.
        public var completeStreams: Int
        public var streamsEndingOnFrame: Int
        /// Other SPECs of the vocabulary that cut the same frames in every stream sampled.
        public var equivalentSpecs: Int
        /// The first malformed header, said in a line ("bad-magic at offset 812 of stream 3 client-to-server").
        public var firstProblem: String?
    }

    public enum Verdict: String, Sendable {
        /// The best framing clears the evidence bar with a clear margin.
        case confident
        /// It clears the bar, but another framing fits nearly as well.
        case ambiguous
        /// It has less evidence than the bar but more than half of it (a capture of a few
        /// messages): used, and said to be a guess.
        case weak
        /// Nothing has half the bar: the port is left undissected.
        case none
    }

    /// What inference says of one server port.
    public struct PortInference: Sendable {
        public var port: UInt16
        public var streams: Int
        public var midStreamStreams: Int
        public var bytes: Int
        /// Different framings, best first (at most 5).
        public var candidates: [Candidate]
        /// How likely the best is among all framings tried and none (evidence tempered for the
        /// dependence between a stream's frames).
        public var confidence: Double
        /// Evidence of the best less the runner-up's, in bits.
        public var marginBits: Double?
        public var verdict: Verdict
        /// Why, in one line.
        public var reason: String

        /// The framing to use, when one clears the bar.
        public var chosen: Candidate? { verdict == .none ? nil : candidates.first }
    }

    /// A margin below this many bits is ambiguous.
    public static let ambiguityMargin = 16.0
    /// Bits are divided by this for the confidence: a stream's frames are not independent.
    static let temperature = 4.0

    /// Per server port (one capture may hold several protocols), in port order.
    public static func choose(_ byServerPort: [UInt16: [Sample]], minimumEvidence: Double = RecoveryBudget.defaultThreshold) -> [PortInference] {
        byServerPort.sorted { $0.key < $1.key }.map { infer($0.value, port: $0.key, minimumEvidence: minimumEvidence) }
    }

    public static func infer(_ samples: [Sample], port: UInt16, minimumEvidence: Double = RecoveryBudget.defaultThreshold) -> PortInference {
        infer(samples, port: port, minimumEvidence: minimumEvidence, lengthFields: FramingCandidate.lengthFields(), presets: FramingCandidate.presetCandidates)
    }

    /// With `lengthFields` and `presets` in place of the vocabulary's 40,000 and 39 (the fuzz
    /// target tries a slice of each: all of them cost 50 ms an input, which kept it at ten inputs
    /// a second, and the presets, always judged in full, were most of what remained).
    static func infer(_ samples: [Sample], port: UInt16, minimumEvidence: Double, lengthFields: [FramingCandidate], presets: [FramingCandidate]) -> PortInference {
        let samples = samples.filter { !$0.bytes.isEmpty }
        var result = PortInference(
            port: port, streams: samples.count, midStreamStreams: samples.filter(\.midStream).count, bytes: samples.reduce(0) { $0 + $1.bytes.count },
            candidates: [], confidence: 0, marginBits: nil, verdict: .none, reason: "")
        guard !samples.isEmpty else {
            result.reason = "no stream carried data"
            return result
        }
        var judge = Judge(samples)
        let ranked = judge.rank(lengthFields + presets + FramingCandidate.delimiters(samples, model: judge.model))
        result.candidates = Array(ranked.prefix(5))
        guard let best = ranked.first else {
            result.reason = "every framing of the vocabulary breaks on these streams"
            return result
        }
        let runnerUp = ranked.dropFirst().first
        result.marginBits = runnerUp.map { best.evidenceBits - $0.evidenceBits }
        let others = ranked.dropFirst().reduce(exp2(-best.evidenceBits / temperature)) { $0 + exp2(($1.evidenceBits - best.evidenceBits) / temperature) }
        result.confidence = 1 / (1 + others)
        if best.evidenceBits < minimumEvidence / 2 {
            result.reason = "the best framing has \(Int(best.evidenceBits.rounded())) bits of evidence, less than half the bar of \(Int(minimumEvidence))"
            if best.malformedHeaders > 0, let problem = best.firstProblem { result.reason += "; \(problem)" }
        } else if let margin = result.marginBits, margin < ambiguityMargin, let runnerUp {
            result.verdict = .ambiguous
            result.reason = margin < 2
                ? "ambiguous: two framings fit equally ('\(best.spec)' and '\(runnerUp.spec)')"
                : "ambiguous: '\(runnerUp.spec)' fits nearly as well (\(Int(margin.rounded())) bits less)"
        } else if best.evidenceBits < minimumEvidence {
            result.verdict = .weak
            result.reason = "weak: \(Int(best.evidenceBits.rounded())) bits of evidence over \(best.frames) messages, below the bar of \(Int(minimumEvidence)); check it"
        } else {
            result.verdict = .confident
            result.reason = "frames \(percent(best.coverage)) of the sampled bytes"
                + (best.completeStreams > 0 ? ", \(best.streamsEndingOnFrame) of \(best.completeStreams) whole streams end on a frame end" : "")
        }
        return result
    }

    static func percent(_ share: Double) -> String {
        "\(Double(Int((share * 1000).rounded())) / 10)%"
    }
}

extension FramingInference {
    /// Runs the stages over one port's samples.
    struct Judge {
        let samples: [Sample]
        let model: ByteModel
        /// More than half the streams are text (line ends need not show more to be plausible).
        let mostlyText: Bool
        private var structure = HeaderStructure()

        init(_ samples: [Sample]) {
            self.samples = samples
            model = ByteModel(samples)
            mostlyText = samples.filter { FramingCandidate.isMostlyText($0.bytes) }.count * 2 > samples.count
        }

        /// Different framings, best first, each named by its plainest SPEC (with the magic,
        /// type and body magic its frames show).
        mutating func rank(_ candidates: [FramingCandidate]) -> [Candidate] {
            let screen = Self.pick(samples, count: 8)
            let sketch = Self.pick(samples, count: 12)
            var sketched: [(candidate: FramingCandidate, evidence: FramingEvidence)] = []
            for candidate in candidates where candidate.alwaysJudged || passesScreen(candidate, screen) {
                sketched.append((candidate, evaluate(candidate, on: sketch, maxFrames: 64, starts: nil)))
            }
            // Keep the 24 best framings of the sketch, each with its 6 plainest members, and the
            // few always judged in full (a sketch of 64 frames cannot see a stream's end).
            var groups = Array(Self.group(sketched).prefix(24))
            let kept = Set(groups.flatMap { $0.prefix(6).map(\.candidate.spec) })
            groups += sketched.filter { $0.candidate.alwaysJudged && !kept.contains($0.candidate.spec) }.map { [$0] }
            var judged: [(candidate: FramingCandidate, evidence: FramingEvidence)] = []
            let everything = Array(samples.indices)
            for group in groups {
                let starts = startsOfMidStreamSamples(group[0].candidate)
                for (i, member) in group.prefix(6).enumerated() {
                    judged.append((member.candidate, evaluate(member.candidate, on: everything, maxFrames: .max, starts: starts)))
                    // The plainest member with the magic and type its frames show: the same
                    // frames, or more where the magic lets recovery resume after a bad header.
                    if i == 0, let refined = refined(member.candidate) {
                        judged.append((refined, evaluate(refined, on: everything, maxFrames: .max, starts: starts)))
                    }
                }
            }
            judged.removeAll { !plausible($0.candidate, $0.evidence) }
            return Self.group(judged).prefix(8).map { describe($0[0].candidate, $0[0].evidence, equivalents: $0.count - 1) }
        }

        /// A delimiter other than a line end in text is found anywhere a byte string repeats
        /// (an OID in certificates, NULs in binary records); it must show what a delimiter does:
        /// whole streams end with it, or segments end with it more often than chance.
        private func plausible(_ candidate: FramingCandidate, _ e: FramingEvidence) -> Bool {
            guard candidate.dissector.delimiter != nil else { return true }
            if candidate.isLineEnd && mostlyText { return true }
            return e.alignment >= 16 || (e.completeStreams > 0 && e.streamsEndingOnFrame * 2 >= e.completeStreams)
        }

        /// Samples for a stage: stream starts first (both directions, different connections),
        /// then those picked up mid-stream.
        static func pick(_ samples: [Sample], count: Int) -> [Int] {
            let order = samples.indices.sorted { a, b in
                (samples[a].midStream ? 1 : 0, samples[a].direction.rawValue, a) < (samples[b].midStream ? 1 : 0, samples[b].direction.rawValue, b)
            }
            // Alternate directions so both are judged.
            let byDirection = Direction.allCases.map { d in order.filter { samples[$0].direction == d } }
            var picked: [Int] = []
            var i = 0
            while picked.count < count && (i < byDirection[0].count || i < byDirection[1].count) {
                for list in byDirection where i < list.count && picked.count < count { picked.append(list[i]) }
                i += 1
            }
            return picked.sorted()
        }

        /// Drops framings that break on the first frames of the screen's streams.
        private func passesScreen(_ candidate: FramingCandidate, _ screen: [Int]) -> Bool {
            var malformed = 0, frames = 0
            for i in screen {
                let sample = samples[i]
                let from = screenStart(sample)
                let walk = sample.bytes.withUnsafeBytes {
                    FrameWalk.run(candidate.dissector(for: sample.direction), over: $0, from: from, atStreamStart: !sample.midStream, maxFrames: 16)
                }
                frames += walk.frames
                if case .malformed = walk.ending { malformed += 1 }
                if malformed > screen.count / 4 { return false }
            }
            return frames > 0
        }

        /// Where a quick walk starts: a mid-stream sample at its second segment, which more often
        /// than not starts a write.
        private func screenStart(_ sample: Sample) -> Int {
            guard sample.midStream else { return 0 }
            return sample.segmentStarts.first { $0 > 0 } ?? 0
        }

        /// Where each mid-stream sample's first boundary is for this framing (by index): the
        /// one recovery finds in its first 8 KiB, else the second segment's start as the screen
        /// takes it (a framing without a magic rarely has the bits for a blind start; where the
        /// guess is wrong its frames say so).
        private func startsOfMidStreamSamples(_ candidate: FramingCandidate) -> [Int: Int] {
            var starts: [Int: Int] = [:]
            let midStream = samples.indices.filter { samples[$0].midStream }
            guard !midStream.isEmpty else { return starts }
            var scorers = Scorers(candidate)
            var scores: [Double] = [], types: [UInt64] = []
            for i in midStream {
                let sample = samples[i]
                let scorer = scorers[sample.direction]
                let n = min(sample.bytes.count, 8 << 10)
                let segmentStarts = sample.segmentStarts.filter { $0 > 0 && $0 < n }
                let found = sample.bytes.withUnsafeBytes { all in
                    scorer.best(
                        in: UnsafeRawBufferPointer(rebasing: all[0..<n]), from: 0, segmentStarts: segmentStarts,
                        endIsSegmentEnd: n == sample.bytes.count || sample.segmentStarts.contains(n), blindStart: true, scores: &scores, types: &types)
                }
                let bar = found?.offset == 0 ? RecoveryBudget.defaultThreshold / 2 : RecoveryBudget.defaultThreshold
                starts[i] = found.flatMap { $0.bits >= bar ? $0.offset : nil } ?? screenStart(sample)
            }
            return starts
        }

        /// Walks `candidate` over the samples and tallies its evidence. `starts`: mid-stream
        /// samples' first boundaries (without them, mid-stream samples start as the screen
        /// does). With no frame limit a walk that meets a malformed header goes on from the next
        /// boundary recovery finds.
        mutating func evaluate(_ candidate: FramingCandidate, on indices: [Int], maxFrames: Int, starts: [Int: Int]?) -> FramingEvidence {
            var e = FramingEvidence()
            if candidate.dissector.delimiter != nil { e.contentWeight = FramingEvidence.delimiterContentWeight }
            var alignment = BinomialEvidence(), bodies = BinomialEvidence()
            var bodyTrials = [Int](repeating: 0, count: 4), bodyHits = [Int](repeating: 0, count: 4), controlHits = [Int](repeating: 0, count: 4)
            let d = candidate.lengthField
            let fixedWidth = d.map { $0.encoding != .varint && $0.encoding != .ber } ?? false
            structure.configure(before: d?.lengthFieldOffset ?? HeaderStructure.places, field: d.map { fixedWidth ? $0.lengthFieldLength : 1 } ?? 0)
            let fixedFieldEnd = fixedWidth ? d.map { $0.lengthFieldOffset + $0.lengthFieldLength } : nil
            let scoresBodies = d?.encoding == .varint
            let delimiterLength = candidate.dissector.delimiter?.count ?? 0
            let countsLines = candidate.isLineEnd
            let structureFrames = maxFrames == .max ? 256 : maxFrames
            var recovery = maxFrames == .max ? Recovery(candidate) : nil
            for i in indices {
                let sample = samples[i]
                e.sampledBytes += sample.bytes.count
                var from = starts?[i] ?? screenStart(sample)
                let dissector = candidate.dissector(for: sample.direction)
                var hits = 0, seen = 0, frames = 0, framed = 0, atStreamStart = !sample.midStream
                let segmentStarts = sample.segmentStarts
                var nextStart = segmentStarts.firstIndex { $0 > from } ?? segmentStarts.count
                var inside = 0
                var ending = FrameWalk.Ending.stopped
                while true {
                    let walk = sample.bytes.withUnsafeBytes { b in
                        FrameWalk.run(dissector, over: b, from: from, atStreamStart: atStreamStart, maxFrames: maxFrames - frames) { start, length, body in
                            while nextStart < segmentStarts.count && segmentStarts[nextStart] < start { nextStart += 1 }
                            if nextStart < segmentStarts.count && segmentStarts[nextStart] == start && start > from { hits += 1 }
                            e.cuts = (e.cuts ^ UInt64(start &+ i &* 1_000_003)) &* 0x100_0000_01B3
                            // A frame of nothing but its header shows nothing of a message, and costs: a
                            // field that reads a zero in a real header cuts every message into a
                            // header-only frame and the rest (keep-alives are few).
                            let headerOnly = d != nil && length == body
                            if headerOnly { e.headerOnlyFrames += 1 }
                            if countsLines && Self.isTextLine(b, start: start, end: start + length - delimiterLength) { e.textLines += 1 }
                            if seen < structureFrames && !headerOnly {
                                // A delimiter framing's delimiter is what it cuts at: only the bytes before it count.
                                structure.add(b, start: start, end: start + length - delimiterLength, fieldEnd: start + (fixedFieldEnd ?? body))
                                let bodyLength = length - body
                                if scoresBodies, bodyLength >= 2, bodyLength <= 1024, b.count > bodyLength {
                                    let group = Self.bodyGroup(bodyLength)
                                    bodyTrials[group] += 1
                                    if case .valid = ProtobufScanner.checkWhole(b.slice(from: start + body, count: bodyLength)) { bodyHits[group] += 1 }
                                    // A control: as many bytes at a place of the stream picked by the frame's start.
                                    let control = Int(UInt64(truncatingIfNeeded: start &* 0x9E37_79B9 &+ i) % UInt64(b.count - bodyLength))
                                    if case .valid = ProtobufScanner.checkWhole(b.slice(from: control, count: bodyLength)) { controlHits[group] += 1 }
                                }
                            }
                            seen += 1
                        }
                    }
                    atStreamStart = false
                    frames += walk.frames
                    framed += walk.end - walk.start
                    inside += segmentStarts.filter { $0 > from && $0 < walk.end }.count
                    ending = walk.ending
                    e.cuts = (e.cuts ^ UInt64(walk.end &+ i &* 7919)) &* 0x100_0000_01B3
                    guard case .malformed(let reason) = walk.ending else { break }
                    e.malformedHeaders += 1
                    if e.firstMalformed == nil { e.firstMalformed = (i, walk.end, reason) }
                    guard let next = recovery?.next(in: sample, after: walk.end) else { break }
                    from = next
                    nextStart = segmentStarts.firstIndex { $0 > from } ?? segmentStarts.count
                }
                e.frames += frames
                e.framedBytes += framed
                if frames > 0 { alignment.add(trials: inside, hits: hits, chance: Double(frames) / Double(max(1, framed))) }
                if case .malformed = ending { continue }
                if sample.complete && (maxFrames == .max || ending == .atEnd) {
                    e.completeStreams += 1
                    if ending == .atEnd && frames > 0 {
                        e.streamsEndingOnFrame += 1
                        e.ends += min(FramingEvidence.maxEnd, log2(Double(max(2, framed)) / Double(frames)))
                    } else {
                        e.ends -= FramingEvidence.openEndCost
                    }
                }
            }
            for group in 0..<4 {
                // Chance: recovery's measured odds, or the controls when they parse more often.
                let control = (Double(controlHits[group]) + 1) / (Double(bodyTrials[group]) + 2)
                bodies.add(trials: bodyTrials[group], hits: bodyHits[group], chance: max(Self.bodyOdds[group], control))
            }
            e.structure = structure.bits(model)
            e.alignment = alignment.bits
            e.bodies = bodies.bits
            return e
        }

        /// Recovery's scorer for a framing, per direction (PostgreSQL frames each its own way),
        /// made when first needed (measuring a header's odds takes a few thousand decodes).
        struct Scorers {
            let candidate: FramingCandidate
            private var made = PerDirection<FrameChainScorer?> { _ in nil }

            init(_ candidate: FramingCandidate) { self.candidate = candidate }

            subscript(direction: Direction) -> FrameChainScorer {
                mutating get {
                    if let scorer = made[direction] { return scorer }
                    let dissector = candidate.dissector(for: direction)
                    let scorer = FrameChainScorer(dissector: dissector, evidence: BoundaryEvidence(dissector))
                    made[direction] = scorer
                    return scorer
                }
            }
        }

        /// A line of printable text no longer than a mail line may be (RFC 5322: 998).
        static func isTextLine(_ b: UnsafeRawBufferPointer, start: Int, end: Int) -> Bool {
            guard end > start, end - start <= 998 else { return false }
            for i in start..<end where !(0x20...0x7E).contains(b[i]) && b[i] != 0x09 { return false }
            return true
        }

        /// Body lengths grouped as `BoundaryEvidence.protobufBody` measures them.
        static func bodyGroup(_ length: Int) -> Int { length < 6 ? 0 : length < 16 ? 1 : length < 32 ? 2 : 3 }
        static let bodyGroups = [2..<6, 6..<16, 16..<32, 32..<1025]

        /// How often bodies of each group parse as protobuf by chance in random bytes or text
        /// (recovery's odds, plus the bit it keeps back).
        static let bodyOdds = bodyGroups.map { exp2(-(BoundaryEvidence.protobufBody(length: $0.lowerBound) + 1)) }

        /// Recovery after a malformed header, for one framing: the next boundary in a window,
        /// with the evidence recovery needs; a few per framing (a wrong one breaks everywhere).
        struct Recovery {
            var scorers: Scorers
            var left = 8
            var scores: [Double] = [], types: [UInt64] = []
            static let window = 4 << 10

            init(_ candidate: FramingCandidate) {
                scorers = Scorers(candidate)
            }

            mutating func next(in sample: Sample, after end: Int) -> Int? {
                guard left > 0, end + 1 < sample.bytes.count else { return nil }
                left -= 1
                let scorer = scorers[sample.direction]
                let from = end + 1, to = min(sample.bytes.count, from + Self.window)
                let starts = sample.segmentStarts.filter { $0 >= from && $0 < to }.map { $0 - from }
                let found = sample.bytes.withUnsafeBytes { all in
                    scorer.best(
                        in: UnsafeRawBufferPointer(rebasing: all[from..<to]), from: 0, segmentStarts: starts,
                        endIsSegmentEnd: to == sample.bytes.count || sample.segmentStarts.contains(to), blindStart: false, scores: &scores, types: &types)
                }
                guard let found, found.bits >= RecoveryBudget.defaultThreshold else { return nil }
                return from + found.offset
            }
        }

        /// Framings grouped by the frames they cut, best group first; in a group the plainest first.
        static func group(_ judged: [(candidate: FramingCandidate, evidence: FramingEvidence)]) -> [[(candidate: FramingCandidate, evidence: FramingEvidence)]] {
            var groups: [UInt64: [(candidate: FramingCandidate, evidence: FramingEvidence)]] = [:]
            for j in judged where j.evidence.frames > 0 { groups[j.evidence.cuts, default: []].append(j) }
            // In a group, the plainest first; of equally plain ones, the one that says most (a magic, a type).
            return groups.values.map { $0.sorted { ($0.candidate.complexity, -$0.candidate.constraints) < ($1.candidate.complexity, -$1.candidate.constraints) } }
                .sorted { a, b in
                    let sa = a[0].evidence.bits - a[0].candidate.complexity, sb = b[0].evidence.bits - b[0].candidate.complexity
                    return sa != sb ? sa > sb : a[0].candidate.spec < b[0].candidate.spec
                }
        }

        /// `candidate` with what its frames show (read off the structure its evaluation just
        /// counted): a magic (constant header bytes), a type field (a header byte with few
        /// values); nil when they show neither.
        private func refined(_ candidate: FramingCandidate) -> FramingCandidate? {
            guard var d = candidate.lengthField, d.magic.isEmpty else { return nil }
            let fields = HeaderFields(structure, lengthField: d)
            guard fields.magic != nil || (fields.type != nil && d.typeField == nil) else { return nil }
            if let (magic, offset) = fields.magic {
                d.magic = InlineBytes(magic)!
                d.magicOffset = offset
            }
            if d.typeField == nil, let type = fields.type { d.typeField = type }
            if d.bodyMagic.isEmpty && !fields.bodyMagic.isEmpty { d.bodyMagic = InlineBytes(fields.bodyMagic)! }
            var refined = candidate
            refined.dissector = .lengthField(d)
            refined.preset = nil
            return refined
        }

        private func describe(_ candidate: FramingCandidate, _ e: FramingEvidence, equivalents: Int) -> Candidate {
            var problem: String?
            if let (i, offset, reason) = e.firstMalformed {
                let s = samples[i]
                problem = "\(e.malformedHeaders) malformed (\(reason.rawValue) first, at offset \(offset) of connection \(s.connection) \(s.direction))"
            }
            return Candidate(
                spec: candidate.spec, evidenceBits: e.bits - candidate.complexity, structureBits: e.structure, alignmentBits: e.alignment,
                endBits: e.ends, bodyBits: e.bodies, coverage: e.coverage, frames: e.frames, streams: samples.count,
                malformedHeaders: e.malformedHeaders, completeStreams: e.completeStreams, streamsEndingOnFrame: e.streamsEndingOnFrame,
                equivalentSpecs: equivalents, firstProblem: problem)
        }
    }
}
