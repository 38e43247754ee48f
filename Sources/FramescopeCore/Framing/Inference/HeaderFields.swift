/// What the header bytes of a framing's frames show besides the length: a magic (bytes every
/// frame has, before the length field or just after it) and a type (a header byte with a few
/// values, widened over the zero bytes before it to 2 or 4 bytes as protocols write types).
/// Read off `HeaderStructure` after a framing's walks.
struct HeaderFields {
    /// The magic and its offset in the frame.
    var magic: ([UInt8], Int)?
    var type: (offset: Int, width: Int)?
    /// Bytes every body starts with right after a varint or BER length, when a magic comes
    /// before it (a TLV: LDAP's messageID tag after its SEQUENCE's length).
    var bodyMagic: [UInt8] = []

    /// Frames a field must be seen in.
    static let minimumFrames = 8
    /// A type takes at most this many values, and its commonest no more than this share.
    static let maxTypeValues = 16
    static let maxTypeShare = 0.95

    init(_ structure: HeaderStructure, lengthField d: LengthFieldDissector) {
        let before = structure.before, field = structure.field
        let fixed = d.encoding != .varint && d.encoding != .ber
        let fieldEnd = d.lengthFieldOffset + (fixed ? d.lengthFieldLength : 1)
        // Places in frame offsets: before the field, and after it where its width is fixed.
        var places: [(offset: Int, values: [(value: UInt8, count: Int)])] = (0..<before).map { ($0, structure.values(at: $0)) }
        let allFrames = places.first?.values.reduce(0) { $0 + $1.count } ?? structure.values(at: before).reduce(0) { $0 + $1.count }
        guard allFrames >= Self.minimumFrames else { return }
        let after = places.count
        if fixed {
            for j in 0..<max(0, HeaderStructure.places - before - field) { places.append((fieldEnd + j, structure.values(at: before + field + j))) }
        }
        func constant(_ i: Int) -> UInt8? {
            let v = places[i].values
            return v.count == 1 && v[0].count == allFrames ? v[0].value : nil
        }

        // The magic: the longest run of constant bytes before the field (zeros at its edges are
        // more likely parts of numbers), else a run of 2 or more just after it.
        func runs(_ range: Range<Int>, minimum: Int) -> (offset: Int, bytes: [UInt8])? {
            var best: (offset: Int, bytes: [UInt8])?
            var i = range.lowerBound
            while i < range.upperBound {
                guard constant(i) != nil else { i += 1; continue }
                var j = i
                while j < range.upperBound, constant(j) != nil { j += 1 }
                var bytes = (i..<j).map { constant($0)! }
                var offset = places[i].offset
                while bytes.last == 0 { bytes.removeLast() }
                if offset > 0 { while bytes.first == 0 { bytes.removeFirst(); offset += 1 } }
                if bytes.count >= minimum && bytes.count > (best?.bytes.count ?? 0) { best = (offset, Array(bytes.prefix(InlineBytes.capacity))) }
                i = j
            }
            return best
        }
        if let run = runs(0..<after, minimum: 1) ?? (fixed ? runs(after..<min(places.count, after + 8), minimum: 2) : nil) {
            magic = (run.bytes, run.offset)
        }

        // One byte: the next tag (the value after it, LDAP's messageID length, is data).
        if !fixed && magic != nil {
            let v = structure.values(at: before + field)
            if v.count == 1, v[0].count == allFrames { bodyMagic = [v[0].value] }
        }

        // The type: a byte with a few values, in the header (before the field, or in the bytes
        // the adjustment says follow it, else its first four).
        let headerAfter = fixed ? (d.lengthAdjustment > 0 ? d.lengthAdjustment : 4) : 0
        let candidates = Array(0..<after) + Array(after..<min(places.count, after + headerAfter))
        let magicRange = magic.map { $0.1..<($0.1 + $0.0.count) } ?? 0..<0
        for i in candidates where !magicRange.contains(places[i].offset) {
            let v = places[i].values
            let n = v.reduce(0) { $0 + $1.count }
            guard n == allFrames, v.count >= 2, v.count <= Self.maxTypeValues, Double(v.map(\.count).max()!) / Double(n) <= Self.maxTypeShare else { continue }
            // Widen over zero bytes before it that belong to no other field.
            var width = 1
            for w in [4, 2] where i - w + 1 >= 0 && (i - w + 1..<i).allSatisfy({ k in
                candidates.contains(k) && constant(k) == 0 && places[k].offset == places[i].offset - (i - k) && !magicRange.contains(places[k].offset)
            }) {
                width = w
                break
            }
            type = (places[i].offset - width + 1, width)
            break
        }
    }
}
