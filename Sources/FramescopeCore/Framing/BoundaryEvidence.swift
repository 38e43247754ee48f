#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// How much a frame that a dissector decodes says about a byte offset being a real frame start,
/// in bits (log2 of how much likelier the evidence is from real framing than from bytes that
/// are not a frame start: random bytes, text, the inside of other messages).
///
/// A candidate start is scored by the chain of frames that follows it (`FrameChainScorer`); each
/// frame adds:
/// - `header`: how rarely a header decodes at a random place (a magic: many bits; a varint or a
///   1–2 byte length: almost none). Measured on random bytes and printable text, capped low when
///   there is no magic (structured data holds small integers far more often than random bytes).
/// - `segmentStart` when the frame starts where a segment starts (senders write messages; a
///   random offset lands on a segment start about once per segment length: log2 of the
///   shorter of the two segments around it, so a run of tiny segments is worth nothing), and
///   `unalignedStart` less when it does not (a chain of many frames crosses many segment
///   starts: missing them all is evidence too).
/// - for varint lengths, `protobufBody(length)` when the body is protobuf wire data.
/// - `typeRepeat` when the frame's type (`type=`, nonzero) is the next frame's: a type takes few
///   values (TLS: 20–23), random bytes or text repeat one about once in 95–256 tries.
/// - minus `frameCost`: a frame claimed without evidence costs, so an unsupported frame in front
///   of real ones never wins.
///
/// Where a short length field can land anywhere (a varint, 1–2 bytes, up to 4 digits, no magic),
/// a false start before the real first one chains into it about once per 100–250 bytes searched
/// (text bytes are lengths of 32–126); a frame in front of the chain then needs `prefixMargin`
/// bits of its own to count (when more than 16 bytes precede it): more than a protobuf-valid body
/// alone, which text matches about once in 128 tries. The first messages after a tail or junk in
/// the same segment are then left out rather than risk a false one.
public struct BoundaryEvidence: Sendable, Equatable {
    /// Bits a decodable header is worth.
    public var header: Double
    /// Whether bodies are scored as protobuf (varint lengths: writeDelimitedTo, MQTT-like).
    public var scoresProtobufBodies: Bool
    /// Evidence a frame in front of a chain needs of its own (0: any positive evidence).
    public var prefixMargin: Double
    /// Bits for a frame whose type is the next frame's (0 without a type field).
    public var typeRepeat: Double
    /// What it says when the first frame of a pickup or after a gap ends exactly where a segment
    /// ends: how rarely a length takes one given value. A short length (a BER length, 1 byte) is
    /// a given value one time in 95 in text (256 in random bytes) and counts only at the first
    /// segment's end, the one end it can reach. A few digits say nothing (text holds digit runs of
    /// every value), nor does a varint: with the protobuf-body odds it let 1 in 10,000 random
    /// streams through (RecoveryPropertyTests).
    public var landing: Double
    /// Whether `landing` counts only when the frame ends where its first segment ends.
    public var landsOnFirstEndOnly: Bool

    public static let frameCost = 2.0
    public static let unalignedStart = 1.0
    /// Most bits a segment start is worth (segments of 4 KiB and more).
    static let maxSegmentStart = 12.0
    /// Most a header is worth without a magic, and with one.
    static let maxHeaderWithoutMagic = 4.0
    static let maxHeader = 16.0

    /// Measures `dissector`'s header odds on a fixed random sample (deterministic).
    init(_ dissector: AnyDissector) {
        switch dissector {
        case .delimiter:
            header = 0
            scoresProtobufBodies = false
            prefixMargin = 0
            landing = 0
            landsOnFirstEndOnly = true
            typeRepeat = 0
        case .lengthField(let d):
            // A sample of 4096 cannot show odds below 2^-12; a magic's are known: 8 bits a byte
            // (6.6 for a printable one, which text matches one time in 95).
            var magicBits = 0.0
            for magic in [d.magic, d.bodyMagic] {
                for i in 0..<magic.count { magicBits += (0x20...0x7E).contains(magic[i]) ? log2(95) : 8 }
            }
            let hasMagic = !d.magic.isEmpty || !d.bodyMagic.isEmpty
            let measured = max(Self.measuredHeaderBits(dissector), magicBits)
            header = min(measured, hasMagic ? Self.maxHeader : Self.maxHeaderWithoutMagic)
            scoresProtobufBodies = d.encoding == .varint
            let landsAnywhere: Bool
            switch d.encoding {
            case .varint, .ber: landsAnywhere = true
            case .binary: landsAnywhere = d.lengthFieldLength <= 2
            case .ascii, .hex: landsAnywhere = d.lengthFieldLength <= 4
            }
            prefixMargin = !hasMagic && landsAnywhere ? 7 : 0
            let shortDigits = (d.encoding == .ascii || d.encoding == .hex) && d.lengthFieldLength <= 4
            let shortValue = d.encoding == .ber || (d.encoding == .binary && d.lengthFieldLength < 2)
            landing = shortDigits || d.encoding == .varint ? 0 : shortValue ? log2(95) : Self.maxHeader
            landsOnFirstEndOnly = shortDigits || shortValue || d.encoding == .varint
            typeRepeat = d.typeField == nil ? 0 : 6
        case .postgres:
            header = min(Self.measuredHeaderBits(dissector), Self.maxHeaderWithoutMagic)
            scoresProtobufBodies = false
            prefixMargin = 0
            landing = Self.maxHeader
            landsOnFirstEndOnly = false
            typeRepeat = 6
        }
    }

    /// Bits a protobuf-valid body of `length` bytes is worth: the chance that random bytes or
    /// printable text of that length parse as protobuf wire data, measured (2×10⁵ samples per
    /// length, scripts/protobuf-odds.py), less one bit. Short bodies say little: two random
    /// bytes parse one time in eight.
    static func protobufBody(length: Int) -> Double {
        switch length {
        case ..<2: 0
        case ..<6: 2
        case ..<16: 3.5
        case ..<32: 5
        default: 6
        }
    }

    /// Bits a segment start is worth between segments of these lengths (nil: not known).
    static func segmentStart(before: Int?, after: Int?) -> Double {
        guard let shorter = [before, after].compactMap({ $0 }).min(), shorter > 1 else { return 0 }
        return min(maxSegmentStart, log2(Double(shorter)))
    }

    /// -log2 of how often a header decodes at a random offset of random bytes or of printable
    /// text (whichever decodes more often), with one success assumed (a sample cannot show
    /// odds below 1 in its size). 8,192 decodes: remembered per dissector for the process
    /// (inference measures the same framings for every port, and its fuzz target for every input).
    static func measuredHeaderBits(_ dissector: AnyDissector) -> Double {
        if let known = measured.withLock({ $0[dissector] }) { return known }
        var worst = 0.0
        for sample in headerSamples {
            var decoded = 1, decided = 2
            sample.withUnsafeBytes { b in
                for o in 0..<4096 {
                    var atStreamStart = false
                    switch dissector.decode(b.dropFirst(o), consumed: 0, atStreamStart: &atStreamStart) {
                    case .frame, .preamble:
                        decoded += 1
                        decided += 1
                    case .malformed:
                        decided += 1
                    case .needMoreData:
                        break
                    }
                }
            }
            worst = max(worst, Double(decoded) / Double(decided))
        }
        let bits = -log2(worst)
        measured.withLock { known in
            if known.count >= 4096 { known.removeAll() }  // refined framings are unbounded in number
            known[dissector] = bits
        }
        return bits
    }

    private static let measured = Mutex<[AnyDissector: Double]>([:])

    /// The fixed samples headers are measured on: random bytes and printable text.
    private static let headerSamples: [[UInt8]] = {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let size = 4096 + 64
        let random = (0..<size).map { _ in UInt8(truncatingIfNeeded: next()) }
        let text = (0..<size).map { _ in UInt8(0x20 + next() % 95) }
        return [random, text]
    }()
}

/// A frame start the recovery found, and how well the chain of frames from it is supported.
struct BoundaryHypothesis: Equatable {
    /// Window offset of the frame start.
    var offset: Int
    /// Evidence for the chain from `offset`, in bits.
    var bits: Double
}

/// Scores every candidate start in a window by the chain of frames that follows it and picks
/// the best (see `BoundaryEvidence`). A chain's score is its first frame's evidence plus the
/// score of the chain from the frame's end when that is positive: a start before a real one
/// wins only with evidence of its own, and the chain stops where going on would lower it.
struct FrameChainScorer {
    let dissector: AnyDissector
    let evidence: BoundaryEvidence

    /// The best start at or after `from` in `window`, whatever its score. `segmentStarts` are
    /// the window offsets where a segment starts, ascending; `endIsSegmentEnd` when the window's
    /// last byte ends a segment. `scores` is scratch space.
    func best(
        in window: UnsafeRawBufferPointer, from: Int, segmentStarts: [Int], endIsSegmentEnd: Bool, blindStart: Bool,
        scores: inout [Double], types: inout [UInt64]
    ) -> BoundaryHypothesis? {
        // The enum's case taken once a search, not once an offset: binding its payload copies the
        // dissector (200 bytes for a length field), 15% of a junk-heavy capture's instructions.
        func walk<D: FrameDissector>(_ d: D) -> BoundaryHypothesis? {
            ChainScores(dissector: d, evidence: evidence).best(
                in: window, from: from, segmentStarts: segmentStarts, endIsSegmentEnd: endIsSegmentEnd, blindStart: blindStart, scores: &scores,
                types: &types)
        }
        switch dissector {
        case .lengthField(let d):
            // A plain varint length decoded in a few instructions, where the general decoding
            // (every field a length-field SPEC may have) was a third of scoring an offset.
            if let limit = d.plainVarintLimit { return walk(PlainVarintDissector(limit: limit)) }
            return walk(d)
        case .delimiter(let d): return walk(d)
        case .postgres(let d): return walk(d)
        }
    }
}

/// `FrameChainScorer`'s walk for one kind of dissector.
private struct ChainScores<Dissector: FrameDissector> {
    let dissector: Dissector
    let evidence: BoundaryEvidence

    @inline(__always)
    func best(
        in window: UnsafeRawBufferPointer, from: Int, segmentStarts: [Int], endIsSegmentEnd: Bool, blindStart: Bool,
        scores: inout [Double], types: inout [UInt64]
    ) -> BoundaryHypothesis? {
        let n = window.count
        guard from < n else { return nil }
        if scores.count < n + 1 { scores = [Double](repeating: 0, count: n + 1) }
        if types.count < n + 1 { types = [UInt64](repeating: 0, count: n + 1) }
        // Segment boundaries: the starts, and the window's end when a segment ends there.
        var boundaries = segmentStarts
        if endIsSegmentEnd && boundaries.last != n { boundaries.append(n) }
        func bits(_ k: Int) -> Double {
            BoundaryEvidence.segmentStart(
                before: k > 0 ? boundaries[k] - boundaries[k - 1] : nil,
                after: k + 1 < boundaries.count ? boundaries[k + 1] - boundaries[k] : nil)
        }
        // Handed to a static `score`: called as a method, the walk's `self` had every field of
        // the dissector loaded again at each offset.
        let dissector = dissector
        return scores.withUnsafeMutableBufferPointer { s -> BoundaryHypothesis? in
          types.withUnsafeMutableBufferPointer { t -> BoundaryHypothesis? in
            // Declared in the closure: captured and mutated, each access was checked for
            // exclusivity at run time (a fifth of a search's instructions where `best` was not inlined).
            var best: Int?
            var next = boundaries.count - 1  // walks the boundaries down with `o`
            t[n] = 0
            s[n] = boundaries.last == n ? bits(boundaries.count - 1) : 0
            if boundaries.last == n { next -= 1 }
            var o = n - 1
            while o >= from {
                while next >= 0 && boundaries[next] > o { next -= 1 }
                let aligned = next >= 0 && boundaries[next] == o ? bits(next) : o == 0 && blindStart ? 0 : -BoundaryEvidence.unalignedStart
                s[o] = Self.score(dissector, evidence, window, at: o, aligned: aligned, scores: s, types: t)
                if o == 0 && blindStart && evidence.landing > 0 && s[0] > -.infinity, let length = frameLength(window, at: 0),
                    evidence.landsOnFirstEndOnly ? boundaries.first(where: { $0 > 0 }) == length : boundaries.contains(length)
                {
                    s[0] += evidence.landing
                }
                if s[o] > -.infinity && (best.map { s[o] > s[$0] } ?? true) { best = o }
                o -= 1
            }
            guard var best else { return nil }
            // Frames in front that are not evidence enough on their own are dropped, unless too few
            // bytes come before them to hold a false start that lands on the next.
            while evidence.prefixMargin > 0, best - from > 16, let length = frameLength(window, at: best), best + length < n, s[best + length] > 0,
                s[best] - s[best + length] + BoundaryEvidence.frameCost < evidence.prefixMargin
            {
                best += length
            }
            return BoundaryHypothesis(offset: best, bits: s[best])
          }
        }
    }

    /// The score of the chain from `o`, given the scores of every later offset.
    @inline(__always)
    private static func score(
        _ dissector: Dissector, _ evidence: BoundaryEvidence, _ w: UnsafeRawBufferPointer, at o: Int, aligned: Double,
        scores s: UnsafeMutableBufferPointer<Double>, types t: UnsafeMutableBufferPointer<UInt64>
    ) -> Double {
        var atStreamStart = false
        t[o] = 0
        switch dissector.decode(w.unchecked(from: o, count: w.count &- o), consumed: 0, atStreamStart: &atStreamStart) {
        case .malformed:
            return -.infinity
        case .needMoreData:
            return aligned - BoundaryEvidence.frameCost
        case .preamble(let length):
            return frameScore(evidence, w, at: o, length: length, body: length, repeated: false, aligned: aligned, scores: s)
        case .frame(let length, let type, let body):
            let repeated = repeats(w, at: o, length: length)
            var bits = frameScore(evidence, w, at: o, length: length, body: body, repeated: repeated, aligned: aligned, scores: s)
            if let type, type != 0, evidence.typeRepeat > 0 {
                t[o] = type
                if o + length < w.count && t[o + length] == type && s[o + length] > -.infinity && !repeated { bits += evidence.typeRepeat }
            }
            return bits
        }
    }

    private static func frameScore(
        _ evidence: BoundaryEvidence, _ w: UnsafeRawBufferPointer, at o: Int, length: Int, body: Int, repeated: Bool, aligned: Double,
        scores s: UnsafeMutableBufferPointer<Double>
    ) -> Double {
        let end = o + length
        // A frame of nothing but its header (zero runs decode as chains of these) proves nothing;
        // nor does one the next frame repeats (filler: a run of one byte, a repeated pattern).
        guard length > body, !repeated else { return aligned - BoundaryEvidence.frameCost + (end <= w.count ? max(0, s[end]) : 0) }
        var bits = aligned - BoundaryEvidence.frameCost + evidence.header
        guard end <= w.count else { return bits }  // the frame goes on past the window
        let bodyLength = length - body
        if evidence.scoresProtobufBodies && bodyLength >= 2 && bodyLength <= 1024 {
            if ProtobufScanner.isValidWhole(w.unchecked(from: o &+ body, count: bodyLength)) {
                bits += BoundaryEvidence.protobufBody(length: bodyLength)
            }
        }
        return bits + max(0, s[end])
    }

    /// Whether the frame at `o` is followed by its own bytes again (the first `repeatCompared`
    /// of them, which hold any header: the same header cuts the same length). Independent bytes
    /// (random, text, the inside of other messages) repeat a frame almost never; filler — a run of
    /// one byte, a pattern repeated, a bulk body of `XXXX` — makes every offset such a chain, each
    /// frame with a valid header, a repeated type and, for varint lengths, a body that parses as
    /// protobuf (MQTT picked up inside a publish of 'X's framed 254 messages of 'X'). Repeated
    /// frames are worth what their segment starts say, as header-only frames are.
    @inline(__always)
    private static func repeats(_ w: UnsafeRawBufferPointer, at o: Int, length: Int) -> Bool {
        let compared = min(length, repeatCompared)
        guard o + length + compared <= w.count, let base = w.baseAddress, base.load(fromByteOffset: o, as: UInt8.self) == base.load(fromByteOffset: o &+ length, as: UInt8.self)
        else { return false }
        return memcmp(base + o, base + o + length, compared) == 0
    }

    static var repeatCompared: Int { 64 }

    private func frameLength(_ w: UnsafeRawBufferPointer, at o: Int) -> Int? {
        var atStreamStart = false
        switch dissector.decode(w.dropFirst(o), consumed: 0, atStreamStart: &atStreamStart) {
        case .frame(let length, _, _), .preamble(let length): return length
        case .malformed, .needMoreData: return nil
        }
    }
}
