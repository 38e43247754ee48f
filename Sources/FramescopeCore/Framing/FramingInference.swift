/// Infers a SPEC from the streams themselves (`--dissector auto`). Every candidate framing is
/// walked over samples of each direction's first bytes. Chaining alone proves nothing (a
/// one-byte length field chains through any bytes), so a candidate is scored by where its frame
/// boundaries fall: senders start writing at message boundaries, so the right framing puts a
/// boundary at most segment starts and at the end of each finished stream, and an accidental
/// one almost never does.
public enum FramingInference {
    /// The first bytes of one direction, where its segments started, and whether the sample
    /// holds the whole stream (so it must end on a frame boundary).
    public struct Sample: Sendable {
        public var bytes: [UInt8]
        public var segmentStarts: [Int]
        public var complete: Bool

        public init(bytes: [UInt8], segmentStarts: [Int], complete: Bool) {
            self.bytes = bytes
            self.segmentStarts = segmentStarts
            self.complete = complete
        }
    }

    public struct Candidate: Sendable, Equatable {
        public var spec: String
        /// Share of segment starts and finished streams' ends that fall on a frame boundary,
        /// less the share chance would give (the framing's boundaries per byte): 0…1.
        public var score: Double
        public var frames: Int
        /// For ties: smaller is simpler.
        var rank: (Int, Int, Int, Int)

        public static func == (a: Candidate, b: Candidate) -> Bool { a.spec == b.spec && a.score == b.score && a.frames == b.frames }
    }

    /// The best candidates, best first (at most `limit`). Samples are each direction's first
    /// contiguous bytes.
    public static func infer(_ samples: [Sample], limit: Int = 5) -> [Candidate] {
        let samples = samples.filter { $0.bytes.count >= 8 }
        guard !samples.isEmpty else { return [] }
        // Boundaries a right framing must hit: every segment start but the first, and the end
        // of every stream the sample holds whole.
        var targets = 0
        for sample in samples {
            targets += sample.segmentStarts.filter { start in start > 0 && start < sample.bytes.count }.count
            if sample.complete { targets += 1 }
        }
        guard targets >= 2 else { return [] }
        var found: [Candidate] = []
        // boundaries[i] == stamp marks a frame boundary at i for the current walk; a new stamp
        // clears them all at once.
        var boundaries = [UInt32](repeating: 0, count: (samples.map(\.bytes.count).max() ?? 0) + 1)
        var stamp: UInt32 = 0

        let totalBytes = samples.reduce(0) { $0 + $1.bytes.count }
        func consider(_ spec: String, rank: (Int, Int, Int, Int), _ frameLength: (UnsafeRawBufferPointer) -> Int?) {
            var hits = 0, frames = 0
            for sample in samples {
                stamp &+= 1
                let count = sample.bytes.withUnsafeBytes { walk($0, frameLength, marking: &boundaries, stamp: stamp) }
                frames += count
                for start in sample.segmentStarts where start > 0 && start < sample.bytes.count && boundaries[start] == stamp { hits += 1 }
                if sample.complete && boundaries[sample.bytes.count] == stamp { hits += 1 }
            }
            guard frames >= 3 else { return }
            // Minus what chance gives: a framing with a boundary at every byte hits every target.
            let density = Double(frames) / Double(totalBytes)
            found.append(Candidate(spec: spec, score: max(0, Double(hits) / Double(targets) - density), frames: frames, rank: rank))
        }

        // Varint length prefixes (protobuf at 0, MQTT-like at 1…4).
        for offset in 0...4 {
            let spec = offset == 0 ? "varint" : "length:offset=\(offset),encoding=varint"
            let dissector = LengthFieldDissector(lengthFieldOffset: offset, encoding: .varint)
            consider(spec, rank: (0, 0, offset, 0)) { dissector.frameLength($0) }
        }
        // Delimiters, for text.
        if samples.allSatisfy({ isMostlyText($0.bytes) }) {
            for (name, delimiter) in [("delimiter", [UInt8]([0x0D, 0x0A])), ("lines", [0x0A]), ("delimiter:\\0", [0x00])] {
                consider(name, rank: (1, 0, 0, 0)) { b in
                    guard let end = find(delimiter, in: b) else { return b.count > 8192 ? -1 : nil }
                    return end
                }
            }
        }
        // Length fields: binary both byte orders, ASCII decimal, ASCII hex.
        for offset in 0...16 {
            for (width, encoding) in [(1, "binary"), (2, "binary"), (3, "binary"), (4, "binary"), (8, "binary"), (4, "hex")]
                + (2...8).map({ ($0, "ascii") })
            {
                let endians = encoding == "binary" && width > 1 ? ["big", "little"] : ["big"]
                for endian in endians {
                    for adjust in -32...32 {
                        var spec = "length:offset=\(offset),width=\(width)"
                        if encoding != "binary" { spec += ",encoding=\(encoding)" }
                        if endian == "little" { spec += ",endian=little" }
                        if adjust != 0 { spec += ",adjust=\(adjust)" }
                        // Equivalent framings (same boundaries) are told apart by how common the
                        // field is: widths 4, 2, 8, 3, 1 in that order; digits, the more the better.
                        let preference = encoding == "binary" ? ([4: 0, 2: 1, 8: 2, 3: 3, 1: 4][width] ?? 5) : 8 - width
                        let rank = (2, abs(adjust), preference, offset * 2 + (endian == "little" ? 1 : 0))
                        let dissector = LengthFieldDissector(
                            lengthFieldOffset: offset, lengthFieldLength: width, endianness: endian == "little" ? .little : .big,
                            encoding: LengthFieldDissector.Encoding(rawValue: encoding) ?? .binary, lengthAdjustment: adjust)
                        consider(spec, rank: rank) { dissector.frameLength($0) }
                    }
                }
            }
        }
        let sorted = found.sorted { a, b in
            if abs(a.score - b.score) > 1e-9 { return a.score > b.score }
            return a.rank < b.rank
        }
        var best: [Candidate] = []
        for candidate in sorted where !best.contains(where: { $0.spec == candidate.spec }) {
            best.append(candidate)
            if best.count == limit { break }
        }
        if var top = best.first, let magic = commonMagic(top.spec, samples) {
            top.spec += ",magic=\(magic)"
            best[0] = top
        }
        return best
    }

    /// Walks frames from the start, marking each frame's end, until a frame does not parse or
    /// runs past the sample; returns the number of complete frames.
    private static func walk(
        _ b: UnsafeRawBufferPointer, _ frameLength: (UnsafeRawBufferPointer) -> Int?, marking boundaries: inout [UInt32], stamp: UInt32
    ) -> Int {
        var offset = 0, frames = 0
        while offset < b.count {
            guard let length = frameLength(UnsafeRawBufferPointer(rebasing: b[offset...])), length > 0 else { break }
            guard offset + length <= b.count else { break }
            offset += length
            boundaries[offset] = stamp
            frames += 1
        }
        return frames
    }

    private static func find(_ delimiter: [UInt8], in b: UnsafeRawBufferPointer) -> Int? {
        guard b.count >= delimiter.count else { return nil }
        for i in 0...(b.count - delimiter.count) where b[i] == delimiter[0] {
            if (1..<delimiter.count).allSatisfy({ b[i + $0] == delimiter[$0] }) { return i + delimiter.count }
        }
        return nil
    }

    private static func isMostlyText(_ sample: [UInt8]) -> Bool {
        let text = sample.prefix(4096).filter { $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || (0x20...0x7E).contains($0) }.count
        return text * 10 >= min(sample.count, 4096) * 9
    }

    /// Bytes every frame starts with, before the length field: a magic to add to the SPEC.
    private static func commonMagic(_ spec: String, _ samples: [Sample]) -> String? {
        guard spec.hasPrefix("length:"), let parsed = try? DissectorSpec(parsing: spec), case .lengthField(let d) = parsed.kind else { return nil }
        var prefix: [UInt8]?
        for sample in samples.map(\.bytes) {
            var offset = 0
            while offset < sample.count {
                let step = sample.withUnsafeBytes { d.decodeFrame(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
                guard case .frame(let length, _, _) = step, offset + length <= sample.count else { break }
                let start = Array(sample[offset..<min(offset + min(4, d.lengthFieldOffset), sample.count)])
                prefix = prefix.map { p in Array(zip(p, start).prefix { $0 == $1 }.map(\.0)) } ?? start
                offset += length
            }
        }
        // Trailing zeros are more likely the high bytes of small numbers than part of a magic.
        guard var magic = prefix else { return nil }
        while magic.last == 0 { magic.removeLast() }
        guard !magic.isEmpty else { return nil }
        let digits = Array("0123456789abcdef")
        return String(magic.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }
}
