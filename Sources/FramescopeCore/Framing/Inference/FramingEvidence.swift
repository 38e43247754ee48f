#if canImport(Glibc)
import Glibc
#endif

/// What a framing's walks over a port's streams say for it, in bits: log2 of how much likelier
/// the streams are if they are framed so than if they are not (the recovery's `BoundaryEvidence`
/// judges one boundary; this judges a framing over whole streams).
///
/// - `structure`: the bytes at the first places of every distinct frame (`HeaderStructure`) are
///   far less random than the rest of the frames: a magic, a version, reserved zeros, a type
///   with few values, lengths alike, a protobuf tag. Each place's values are coded with their
///   own distribution and compared with the frames' other bytes, less the bits that
///   distribution costs to state (MDL), so the values a wrong framing reads at random places
///   earn nothing. A delimiter framing's delimiter is left out (it is what the framing cuts at).
/// - `alignment`: writes start at message boundaries, so the right framing's frames start where
///   segments start more often than chance (the framing's frames per byte) would have them: a
///   binomial likelihood ratio over every segment start, nothing on bulk streams where
///   segments start anywhere.
/// - `ends`: a stream seen whole (FIN) ends where a frame ends: about log2(mean frame length)
///   bits each; one that ends inside a frame costs.
/// - `bodies`: varint lengths: protobuf-valid bodies, against as many bytes at another place of
///   the stream (base64 text of zeros parses whenever its length is a multiple of 9).
/// - `textLines`: a line-end framing's frames that are lines of printable text, a quarter bit
///   each (a text protocol is its lines: CRLF that always comes as a pair and ends printable
///   runs says so even where lines share nothing and writes end anywhere).
/// - each malformed header costs `malformedCost`, each frame of nothing but its header
///   `headerOnlyCost` (a length field that reads a zero in a real header cuts every message in
///   two: a header-only frame and the rest).
struct FramingEvidence {
    var structure = 0.0
    var alignment = 0.0
    var ends = 0.0
    var bodies = 0.0
    /// Malformed headers met (a walk goes on from the next boundary recovery finds).
    var malformedHeaders = 0
    /// Frames of nothing but a header.
    var headerOnlyFrames = 0
    /// Frames of a line-end framing that are a line of printable text.
    var textLines = 0
    var frames = 0
    var framedBytes = 0
    var sampledBytes = 0
    var completeStreams = 0
    var streamsEndingOnFrame = 0
    /// The first malformed header: sample index, offset, reason.
    var firstMalformed: (sample: Int, offset: Int, reason: MalformedReason)?
    /// A hash of every frame start: framings that cut the same frames have the same.
    var cuts: UInt64 = 0xCBF2_9CE4_8422_2325

    static let malformedCost = 8.0
    static let headerOnlyCost = 6.0
    static let textLineBits = 0.25
    static let openEndCost = 6.0
    /// Most bits a stream's end on a frame boundary is worth.
    static let maxEnd = 16.0

    var bits: Double {
        (structure + bodies) / contentWeight + alignment + ends - Self.malformedCost * Double(malformedHeaders)
            - Self.headerOnlyCost * Double(headerOnlyFrames) + Self.textLineBits * Double(textLines)
    }
    /// What header and body bits are divided by (see `contentWeight`).
    var contentWeight = Self.contentWeight
    /// Header and body evidence count an eighth: neighbouring places and repeated content are
    /// far from independent (with them at full weight, framings whose frames drift through
    /// repetitive rows outscored the right one, whose frames start where writes start). A
    /// delimiter framing's count a sixteenth: its cuts predict nothing (a length field says where
    /// the next header is, and a wrong one is caught there), so a string that ends every JSON
    /// body ties with the binary header before it that says the same.
    static let contentWeight = 8.0
    static let delimiterContentWeight = 16.0

    /// Framed bytes over sampled bytes.
    var coverage: Double { sampledBytes == 0 ? 0 : Double(framedBytes) / Double(sampledBytes) }
}

/// The stream's byte distribution (add-one smoothed), as log2 probabilities.
struct ByteModel {
    var log2p: [Double]

    init(_ samples: [FramingInference.Sample]) {
        var counts = [Int](repeating: 1, count: 256)
        var total = 256
        for sample in samples {
            for byte in sample.bytes {
                counts[Int(byte)] += 1
            }
            total += sample.bytes.count
        }
        log2p = counts.map { log2(Double($0) / Double(total)) }
    }
}

/// Counts the byte values at the first `places` places of every frame: from the frame's start,
/// with a varint or BER length counted as one place (what follows it moves with its width). The
/// same number of places for every framing, so none is judged on more bytes than another.
/// The field's bytes count like the others: lengths more alike than the stream's bytes (a
/// 2-byte length whose high byte is always below 8) are evidence, and a wrong field that only
/// chains through bytes that read as lengths (digits, zero high bytes) breaks where they stop,
/// which costs (judging field bytes against only the values a field can hold was tried: it let
/// a framing that reads the high zero bytes as another field win).
struct HeaderStructure {
    static let places = 32
    /// Where the length field starts, and how many places it takes.
    private(set) var before = 0
    private(set) var field = 0
    private var counts = [UInt32](repeating: 0, count: places * 256)
    private var used = [Bool](repeating: false, count: places)
    /// The values seen at each place (`place * 256 ..< place * 256 + distinct[place]`), so that
    /// scoring and resetting a place costs its values, not 256.
    private var valuesSeen = [UInt8](repeating: 0, count: places * 256)
    private var distinct = [Int](repeating: 0, count: places)
    /// Frames already counted, by their first bytes and length: a frame seen again (a greeting
    /// every connection starts with, a heartbeat, a record repeated) says nothing new.
    private var seen = Set<UInt64>()
    static let sameFrameBytes = 256
    /// The frames' own bytes past the places (up to `bodyBytes` a frame): what the places are
    /// compared with. Against the stream's bytes at large, a framing whose frames all start
    /// inside text rows would earn from the text alone (text is less random than text and
    /// binary headers mixed); against its own frames' bytes, only places that differ from the
    /// rest of the frame, as a header does, earn.
    private var body = [UInt32](repeating: 0, count: 256)
    private var bodyCount = 0
    static let bodyBytes = 32

    /// Places for a length field at `before` taking `field` places (a varint or BER: 1), or a
    /// delimiter framing (`before` = all places, no field).
    mutating func configure(before: Int, field: Int) {
        reset()
        self.before = min(before, Self.places)
        self.field = field
    }

    /// Adds one frame: its bytes up to `end` (a delimiter framing: before its delimiter), its
    /// length field ending at `fieldEnd`.
    @inline(__always)
    mutating func add(_ b: UnsafeRawBufferPointer, start: Int, end: Int, fieldEnd: Int) {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325 ^ UInt64(end - start)
        for i in start..<min(end, start + Self.sameFrameBytes) { hash = (hash ^ UInt64(b[i])) &* 0x100_0000_01B3 }
        guard seen.insert(hash).inserted else { return }
        var at = start
        for place in 0..<Self.places {
            if place == before + field { at = fieldEnd }
            guard at < end else { return }
            let slot = place &* 256 &+ Int(b[at])
            if counts[slot] == 0 {
                valuesSeen[place &* 256 &+ distinct[place]] = b[at]
                distinct[place] &+= 1
            }
            counts[slot] &+= 1
            used[place] = true
            at += 1
        }
        let bodyEnd = min(end, at + Self.bodyBytes)
        bodyCount += max(0, bodyEnd - at)
        while at < bodyEnd {
            body[Int(b[at])] &+= 1
            at += 1
        }
    }

    mutating func reset() {
        seen.removeAll(keepingCapacity: true)
        if bodyCount > 0 {
            for x in 0..<256 { body[x] = 0 }
            bodyCount = 0
        }
        for place in used.indices where used[place] {
            for i in 0..<distinct[place] { counts[place * 256 + Int(valuesSeen[place * 256 + i])] = 0 }
            distinct[place] = 0
            used[place] = false
        }
    }

    /// The MDL evidence of all places, in bits (see `FramingEvidence`).
    func bits(_ model: ByteModel) -> Double {
        // The frames' bytes, smoothed toward the stream's with 256 bytes' weight.
        let weight = 256.0, n = Double(body.reduce(0) { $0 + Int($1) })
        let reference = (0..<256).map { x in log2((Double(body[x]) + weight * exp2(model.log2p[x])) / (n + weight)) }
        var total = 0.0
        var values: [UInt8] = []
        values.reserveCapacity(256)
        for place in used.indices where used[place] {
            // In ascending order, as a walk over all 256 would sum them (the same bits exactly).
            values.removeAll(keepingCapacity: true)
            values.append(contentsOf: valuesSeen[(place * 256)..<(place * 256 + distinct[place])])
            values.sort()
            total += Self.placeBits(values, counts[(place * 256)..<(place * 256 + 256)], reference)
        }
        return total
    }

    /// One place: its values coded with their own distribution rather than `reference`, less
    /// what stating that distribution costs (which values, and their shares).
    /// `values`: the values seen there, ascending; `c`: the place's 256 counts.
    static func placeBits(_ values: [UInt8], _ c: ArraySlice<UInt32>, _ reference: [Double]) -> Double {
        let base = c.startIndex
        var n = 0.0
        for x in values { n += Double(c[base + Int(x)]) }
        let distinct = values.count
        guard n >= 3 else { return 0 }
        var fit = 0.0
        for x in values {
            let k = Double(c[base + Int(x)])
            fit += k * (log2(k / n) - reference[Int(x)])
        }
        let cost = log2Choose256[distinct] + Double(distinct - 1) / 2 * log2(n)
        return max(0, fit - cost)
    }

    /// log2 of (256 choose k).
    static let log2Choose256: [Double] = (0...256).map { (k: Int) -> Double in
        let ways: Double = lgamma(257.0) - lgamma(Double(k) + 1) - lgamma(Double(257 - k))
        return ways / log(2.0)
    }

    /// The values seen at a place, and how often.
    func values(at place: Int) -> [(value: UInt8, count: Int)] {
        guard place < Self.places else { return [] }
        return (0..<256).compactMap { x in counts[place * 256 + x] > 0 ? (UInt8(x), Int(counts[place * 256 + x])) : nil }
    }
}

/// Evidence from events that happen more often under the right framing than by chance: frame
/// starts on segment starts (chance: the framing's frames per byte), protobuf-valid bodies
/// (chance: how often random bytes or text parse). One shared rate is fitted to all the trials;
/// the log2 likelihood ratio against chance, less half a bit per log2 of the trials for the
/// fitted rate (BIC), is 0 when the rate is not above chance: events rarer than chance under a
/// framing say nothing for it, and nothing against it either (bodies need not be protobuf).
struct BinomialEvidence {
    /// Groups of trials with the same chance: how many, how many hit.
    var groups: [(trials: Int, hits: Int, chance: Double)] = []

    mutating func add(trials: Int, hits: Int, chance: Double) {
        if trials > 0 { groups.append((trials, min(hits, trials), chance)) }
    }

    var bits: Double {
        let trials = groups.reduce(0) { $0 + $1.trials }, hits = groups.reduce(0) { $0 + $1.hits }
        guard trials > 0 else { return 0 }
        let p = (Double(hits) + 0.5) / (Double(trials) + 1)
        var llr = 0.0, expected = 0.0
        for g in groups {
            let q = min(max(g.chance, 1e-9), 0.999)
            llr += Double(g.hits) * log2(p / q) + Double(g.trials - g.hits) * log2((1 - p) / (1 - q))
            expected += q * Double(g.trials)
        }
        guard Double(hits) > expected else { return 0 }
        return max(0, llr - 0.5 * log2(Double(trials) + 1))
    }
}

