#if canImport(Glibc)
import Glibc
#endif

/// One framing inference tries: a rule from the SPEC vocabulary, and how much believing it costs
/// (Occam: an adjustment without a meaning, an odd width or a learned delimiter must earn its bits).
struct FramingCandidate {
    /// The client side's dissector (a PostgreSQL server frames its own way: `dissector(for:)`).
    var dissector: AnyDissector
    /// Bits of prior against it; 0 for the plainest framings.
    var complexity: Double
    /// A preset's name, when it is one.
    var preset: String?
    /// Judged on everything sampled whatever its sketch (delimiters and presets: few, and what
    /// tells them apart, a stream's end or start, a sketch does not see).
    var alwaysJudged = false

    init(dissector: AnyDissector, complexity: Double, preset: String? = nil, alwaysJudged: Bool = false) {
        self.dissector = dissector
        self.complexity = complexity
        self.preset = preset
        self.alwaysJudged = alwaysJudged
    }

    func dissector(for direction: Direction) -> AnyDissector {
        guard case .postgres(var d) = dissector else { return dissector }
        d.isClient = direction == .clientToServer
        return .postgres(d)
    }

    var spec: String {
        if let preset { return "preset:\(preset)" }
        switch dissector {
        case .lengthField(let d):
            if d.encoding == .varint && d.lengthFieldOffset == 0 && d.lengthAdjustment == 0 && d.magic.isEmpty && d.typeField == nil && d.preamble.isEmpty {
                return "varint"
            }
            return d.specText
        case .delimiter(let d): return DelimiterDissector.specText(d.delimiter.array)
        case .postgres: return "preset:postgres"
        }
    }

    /// What it says besides the length: magic and body-magic bytes, a type field, a preamble (a
    /// preset's limits, such as DNS's max=65537, are no reason to name it for a custom protocol).
    var constraints: Int {
        guard let d = lengthField else { return 0 }
        return d.magic.count + d.bodyMagic.count + (d.typeField == nil ? 0 : 1) + d.preamble.count
    }

    /// LF or CRLF framing: text lines.
    var isLineEnd: Bool {
        guard let delimiter = dissector.delimiter else { return false }
        return delimiter.count <= 2 && delimiter[delimiter.count - 1] == 0x0A
    }

    /// The length-field dissector, when it is one.
    var lengthField: LengthFieldDissector? {
        if case .lengthField(let d) = dissector { return d }
        return nil
    }
}

extension FramingCandidate {
    /// Most offsets the length field is looked for at.
    static let maxOffset = 32
    /// Most header bytes after a length field that counts the body only (adjust=1…32).
    static let maxHeaderAfterField = 32

    /// Every length field of the vocabulary: offsets 0–32; binary widths 1–8 in both byte orders,
    /// ASCII decimal and hex digits of 1–8, varint and BER; each with the adjustments that have a
    /// meaning: none, the length counts its own field, the whole frame from its first byte, or
    /// the body only after 1–32 more header bytes.
    static func lengthFields() -> [FramingCandidate] {
        var out: [FramingCandidate] = []
        out.reserveCapacity(40_000)
        for offset in 0...maxOffset {
            var fields: [(LengthFieldDissector.Encoding, Int, LengthFieldDissector.Endianness)] = [(.varint, 5, .big), (.ber, 5, .big)]
            for width in 1...8 {
                fields.append((.binary, width, .big))
                if width > 1 { fields.append((.binary, width, .little)) }
                fields.append((.ascii, width, .big))
                fields.append((.hex, width, .big))
            }
            for (encoding, width, endian) in fields {
                let variable = encoding == .varint || encoding == .ber
                let fieldEnd = offset + (variable ? 1 : width)
                var adjusts = [0] + (1...maxHeaderAfterField).map { $0 }
                if !variable {
                    adjusts.append(-fieldEnd)
                    if offset > 0 { adjusts.append(-width) }
                }
                for adjust in adjusts {
                    let d = LengthFieldDissector(
                        lengthFieldOffset: offset, lengthFieldLength: width, endianness: endian, encoding: encoding, lengthAdjustment: adjust)
                    out.append(FramingCandidate(dissector: .lengthField(d), complexity: complexity(d)))
                }
            }
        }
        return out
    }

    /// `presets()`, parsed once: every port inferred judges them.
    static let presetCandidates = presets()

    /// The presets, each also as its plain SPEC a bit cheaper (a custom protocol with a 2-byte
    /// length is not named DNS): they win where what only they say (a preamble, PostgreSQL's
    /// startup, a body magic, header-only values) frames better.
    static func presets() -> [FramingCandidate] {
        DissectorSpec.presets.keys.sorted().flatMap { name -> [FramingCandidate] in
            guard let spec = try? DissectorSpec(parsing: "preset:" + name) else { return [] }
            switch spec.kind {
            case .lengthField(let d):
                var candidates = [
                    FramingCandidate(dissector: .lengthField(d), complexity: complexity(d) + 1, preset: name, alwaysJudged: true),
                    FramingCandidate(dissector: .lengthField(d), complexity: complexity(d), alwaysJudged: true),
                ]
                // Its lengths without its magic too: where streams start with other bytes (the zeros
                // an overlapping retransmission left, tls-overlap-zero-window), a walk from the first
                // byte finds no header with the magic, and frames nothing. Where it finds them, the
                // variant with the magic cuts the same frames and is named (it says more).
                if !d.magic.isEmpty {
                    var plain = d
                    plain.magic = InlineBytes()
                    plain.magicOffset = 0
                    candidates.append(FramingCandidate(dissector: .lengthField(plain), complexity: complexity(d), alwaysJudged: true))
                }
                return candidates
            case .postgres(let max):
                return [FramingCandidate(dissector: .postgres(PostgresDissector(isClient: true, maxFrameLength: max)), complexity: 3, preset: name, alwaysJudged: true)]
            case .delimiter: return []
            }
        }
    }

    /// Bits of prior: offsets further in, rarer widths and encodings, the other byte order and
    /// adjustments cost a little each, so that among framings that cut the same frames the
    /// plainest is named (a 4-byte big-endian length at 0 over a 2-byte one at 2 whose high
    /// bytes are always zero).
    static func complexity(_ d: LengthFieldDissector) -> Double {
        var bits = Double(d.lengthFieldOffset) / 8
        switch d.encoding {
        case .binary:
            bits += [4: 0, 2: 0.5, 8: 1, 3: 1.5, 1: 2][d.lengthFieldLength] ?? 3
            // Fields sit at offsets their width divides (Modbus's 2-byte length at 4, after a zero
            // protocol id, is not a 4-byte length at 2).
            if d.lengthFieldOffset % min(d.lengthFieldLength, 4) != 0 { bits += 1 }
        case .varint: bits += d.lengthFieldOffset == 0 ? 0 : 1
        case .ber: bits += 2
        case .ascii: bits += 1 + Double(8 - d.lengthFieldLength) / 4
        case .hex: bits += 1.5 + Double(8 - d.lengthFieldLength) / 4
        }
        if d.endianness == .little { bits += 0.5 }
        let fieldEnd = d.lengthFieldOffset + d.lengthFieldLength
        switch d.lengthAdjustment {
        case 0: break
        case -fieldEnd, -d.lengthFieldLength: bits += 1
        default: bits += 2 + Double(abs(d.lengthAdjustment)) / 16
        }
        return bits
    }

    /// Delimiters: CRLF, LF and NUL; any other 1–4 bytes that end at least half of the segments
    /// and whole streams (text protocols end a write with their delimiter); and byte pairs far
    /// more common than their bytes make them (a delimiter inside bulk data), widened to the
    /// bytes that always surround them. Naming one costs its 8 bits a byte.
    static func delimiters(_ samples: [FramingInference.Sample], model: ByteModel) -> [FramingCandidate] {
        var out = [
            FramingCandidate(dissector: .delimiter(DelimiterDissector(delimiter: [0x0D, 0x0A])), complexity: 0, alwaysJudged: true),
            FramingCandidate(dissector: .delimiter(DelimiterDissector(delimiter: [0x0A])), complexity: 0.5, alwaysJudged: true),
            FramingCandidate(dissector: .delimiter(DelimiterDissector(delimiter: [0x00])), complexity: 1, alwaysJudged: true),
        ]
        var learned = Set(segmentEnds(samples)).union(commonPairs(samples, model: model))
        learned.subtract([[0x0D, 0x0A], [0x0A], [0x00]])
        for delimiter in learned.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            out.append(FramingCandidate(dissector: .delimiter(DelimiterDissector(delimiter: delimiter)), complexity: 8 * Double(delimiter.count), alwaysJudged: true))
        }
        return out
    }

    /// Byte strings of 1–4 that end at least half of the segments, or at least half of the whole
    /// streams (bulk streams end their segments anywhere), the longest of a family
    /// ("\r\n.\r\n" over ".\r\n" when both end the same segments).
    static func segmentEnds(_ samples: [FramingInference.Sample]) -> [[UInt8]] {
        func common(_ ends: [(bytes: [UInt8], end: Int)], minimum: Int) -> [[UInt8]] {
            var counts: [[UInt8]: Int] = [:]
            for (bytes, end) in ends {
                for width in 1...4 where end >= width { counts[Array(bytes[(end - width)..<end]), default: 0] += 1 }
            }
            let found = counts.filter { $0.value * 2 >= ends.count && ends.count >= minimum }
            return found.filter { delimiter, count in
                !found.contains { $0.key.count > delimiter.count && $0.value == count && $0.key.suffix(delimiter.count).elementsEqual(delimiter) }
            }.map(\.key)
        }
        let segmentEnds = samples.flatMap { s in s.segmentStarts.filter { $0 > 0 }.map { (s.bytes, $0) } }
        let streamEnds = samples.filter(\.complete).map { ($0.bytes, $0.bytes.count) }
        return common(segmentEnds + streamEnds, minimum: 4) + common(streamEnds, minimum: 2)
    }

    /// Byte pairs at least 16 times as common as their bytes' shares make them (three at most,
    /// the most telling first), each widened to 4 bytes over the bytes seen on one side in 9 of
    /// 10 of its places.
    static func commonPairs(_ samples: [FramingInference.Sample], model: ByteModel) -> [[UInt8]] {
        var pairs = [Int](repeating: 0, count: 1 << 16)
        var total = 0
        // Text is full of common pairs; its delimiters are line ends, found above.
        for sample in samples where sample.bytes.count >= 2 && !isMostlyText(sample.bytes) {
            var previous = Int(sample.bytes[0])
            for byte in sample.bytes.dropFirst() {
                pairs[previous << 8 | Int(byte)] += 1
                previous = Int(byte)
            }
            total += sample.bytes.count - 1
        }
        var telling: [(pair: Int, bits: Double)] = []
        for pair in 0..<(1 << 16) where pairs[pair] >= 8 {
            let expected = Double(total) * exp2(model.log2p[pair >> 8] + model.log2p[pair & 0xFF])
            let count = Double(pairs[pair])
            if count >= 16 * expected { telling.append((pair, count * log2(count / expected))) }
        }
        return telling.sorted { $0.bits > $1.bits }.prefix(3).map { widen([UInt8(truncatingIfNeeded: $0.pair >> 8), UInt8(truncatingIfNeeded: $0.pair)], samples) }
    }

    static func isMostlyText(_ bytes: [UInt8]) -> Bool {
        let text = bytes.prefix(4096).filter { $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || (0x20...0x7E).contains($0) }.count
        return text * 10 >= min(bytes.count, 4096) * 9
    }

    /// Widens `bytes` by the byte before or after it that its occurrences share (9 in 10).
    static func widen(_ bytes: [UInt8], _ samples: [FramingInference.Sample]) -> [UInt8] {
        var bytes = bytes
        while bytes.count < 4 {
            var before = [Int](repeating: 0, count: 256), after = [Int](repeating: 0, count: 256), seen = 0
            for sample in samples {
                var i = 0
                let b = sample.bytes
                while i + bytes.count <= b.count {
                    if b[i] == bytes[0] && b[i..<(i + bytes.count)].elementsEqual(bytes) {
                        seen += 1
                        if i > 0 { before[Int(b[i - 1])] += 1 }
                        if i + bytes.count < b.count { after[Int(b[i + bytes.count])] += 1 }
                    }
                    i += 1
                }
            }
            let bestBefore = before.indices.max { before[$0] < before[$1] }!, bestAfter = after.indices.max { after[$0] < after[$1] }!
            if before[bestBefore] * 10 >= seen * 9 && before[bestBefore] >= after[bestAfter] {
                bytes.insert(UInt8(bestBefore), at: 0)
            } else if after[bestAfter] * 10 >= seen * 9 {
                bytes.append(UInt8(bestAfter))
            } else {
                break
            }
        }
        return bytes
    }
}

extension DelimiterDissector {
    /// The SPEC text of a delimiter: `delimiter` for CRLF, `lines` for LF, the bytes as text when
    /// they read back as themselves, hex otherwise. (Text that starts with `0X` reads as hex: the
    /// fuzzer found inference naming `delimiter:0X}}`, which does not parse.)
    static func specText(_ delimiter: [UInt8]) -> String {
        switch delimiter {
        case [0x0D, 0x0A]: return "delimiter"
        case [0x0A]: return "lines"
        case [0x00]: return "delimiter:\\0"
        default:
            let text = String(decoding: delimiter, as: UTF8.self)
            if delimiter.allSatisfy({ (0x21...0x7E).contains($0) && $0 != 0x5C && $0 != 0x2C && $0 != 0x3D }),
                (try? DissectorSpec.delimiterBytes(text, spec: text)) == delimiter
            {
                return "delimiter:" + text
            }
            return "delimiter:0x" + hexDigits(delimiter)
        }
    }
}
