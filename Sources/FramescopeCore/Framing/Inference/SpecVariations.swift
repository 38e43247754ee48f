/// SPECs next to a length-field SPEC that does not frame a stream: another adjustment (a length
/// that counts the header, or not its own field), the other byte order, another width or
/// offset, the magic somewhere else, another encoding. One that frames the stream from its first
/// byte to its end without a malformed header, with frame starts on segment starts far more
/// often than chance, is worth saying: "with adjust=-8 the stream frames cleanly (1,240
/// messages, 0 malformed)".
public enum SpecVariations {
    public struct Suggestion: Sendable, Equatable {
        /// The option that changed, as SPEC text (`adjust=-8`).
        public var change: String
        /// The whole SPEC with the change.
        public var spec: String
        /// What the change means, when it has a name ("the length counts the header").
        public var meaning: String?
        /// Frames it cuts in the stream (the sample), none malformed.
        public var messages: Int
        public var bytes: Int
    }

    /// Streams shorter than this, or framed in fewer messages, prove nothing either way.
    static let minimumBytes = 64
    static let minimumMessages = 8
    /// Segment starts inside the framed bytes (after the first): fewer cannot tell framings apart.
    static let minimumSegmentStarts = 8
    /// Share of segment starts on frame starts, less the share chance gives, a variation needs.
    static let minimumAlignment = 0.2

    /// How far a SPEC frames a stream from its first byte.
    public struct Walk: Sendable {
        /// Whole frames cut, and where the last of them ends.
        public var frames = 0
        public var end = 0
        /// Where the first header that does not parse starts (nil: none).
        public var malformedAt: Int?
        /// Frames that start where a segment starts (the stream's first byte included).
        var aligned = 0
        /// A hash of the frame starts: two walks that cut the same frames have the same.
        var cuts = 0
    }

    /// Walks `bytes` with `d` until a header does not parse or a frame runs past the end.
    public static func walk(_ d: LengthFieldDissector, _ bytes: [UInt8], starts: [Int] = []) -> Walk {
        var w = Walk(), next = 0
        let walked = bytes.withUnsafeBytes { all in
            FrameWalk.run(.lengthField(d), over: all, from: 0, atStreamStart: true) { start, _, _ in
                w.cuts = w.cuts &* 1_000_003 &+ start
                while next < starts.count && starts[next] < start { next += 1 }
                if next < starts.count && starts[next] == start { w.aligned += 1 }
                w.frames += 1
            }
        }
        w.end = walked.end
        if case .malformed = walked.ending { w.malformedAt = walked.end }
        return w
    }

    /// The variation that frames `sample` cleanly where `d` does not, with the most frame starts on
    /// segment starts, if one does and no different framing does as well. `whole`: the sample is
    /// the whole stream, so the last frame must end at its end.
    public static func suggest(_ d: LengthFieldDissector, sample: [UInt8], segmentStarts: [Int], whole: Bool) -> Suggestion? {
        guard sample.count >= minimumBytes else { return nil }
        let original = walk(d, sample, starts: segmentStarts)
        guard original.malformedAt != nil || (whole && original.end != sample.count) else { return nil }
        var found: [(variant: LengthFieldDissector, meaning: String?, walk: Walk)] = []
        for (variant, meaning) in variations(of: d) {
            let w = walk(variant, sample, starts: segmentStarts)
            guard w.malformedAt == nil, w.frames >= max(minimumMessages, original.frames + 1) else { continue }
            // Clean is not enough: a short length walks through anything. The right framing puts
            // frame starts on segment starts far more often than chance (as inference scores it).
            let starts = segmentStarts.filter { $0 > 0 && $0 < w.end }.count
            guard starts >= minimumSegmentStarts,
                Double(w.aligned - 1) / Double(starts) - Double(w.frames) / Double(max(1, w.end)) >= minimumAlignment
            else { continue }
            // A sample cut short may end inside a frame, but not one longer than what is left.
            guard whole ? w.end == sample.count : sample.count - w.end < 65536 else { continue }
            found.append((variant, meaning, w))
        }
        // The best aligned wins; two different framings that explain the segments as well (fixed-size
        // messages fit many) are no answer. Variations that cut the same frames are one (the nearest).
        guard let best = found.max(by: { $0.walk.aligned < $1.walk.aligned }).flatMap({ top in found.first { $0.walk.aligned == top.walk.aligned } }),
            !found.contains(where: { $0.walk.cuts != best.walk.cuts && $0.walk.aligned >= best.walk.aligned })
        else { return nil }
        let spec = best.variant.specText
        return Suggestion(
            change: change(from: d.specText, to: spec), spec: spec, meaning: best.meaning, messages: best.walk.frames, bytes: best.walk.end)
    }

    /// The options of `after` that differ from `before` (`adjust=-8`), defaults written out.
    static func change(from before: String, to after: String) -> String {
        let old = options(before), new = options(after)
        let keys = new.map(\.key) + old.map(\.key).filter { key in !new.contains { $0.key == key } }
        return keys.compactMap { key -> String? in
            let now = new.first { $0.key == key }?.value ?? defaults[key]
            let was = old.first { $0.key == key }?.value ?? defaults[key]
            guard let now, now != was else { return nil }
            return "\(key)=\(now)"
        }.joined(separator: ",")
    }

    /// What an option is when a SPEC leaves it out.
    static let defaults = ["adjust": "0", "endian": "big", "encoding": "binary"]

    /// A `length:` SPEC's options, in order.
    static func options(_ spec: String) -> [(key: String, value: String)] {
        spec.dropFirst("length:".count).split(separator: ",").map { option in
            let parts = option.split(separator: "=", maxSplits: 1).map(String.init)
            return (parts[0], parts.count > 1 ? parts[1] : "")
        }
    }

    /// Variations, nearest first: the adjustments, byte order, widths, offsets, magic positions
    /// and encodings an engineer gets wrong when writing a SPEC from a header description.
    static func variations(of d: LengthFieldDissector) -> [(LengthFieldDissector, String?)] {
        var out: [(LengthFieldDissector, String?)] = []
        let header = max(d.fieldsEnd, d.preamble.count), fieldEnd = d.lengthFieldOffset + d.lengthFieldLength
        // Adjustments with a meaning first (the resulting adjustment, not the step, has it).
        var meanings: [Int: String] = [0: "no adjustment: the length counts the body only"]
        if d.encoding != .varint && d.encoding != .ber {
            if d.lengthFieldOffset > 0 { meanings[-d.lengthFieldLength] = "the length counts its own field" }
            meanings[-header] = "the length counts the whole header"
            meanings[-fieldEnd] = "the length counts the header"
        }
        let named = meanings.keys.sorted { abs($0 - d.lengthAdjustment) < abs($1 - d.lengthAdjustment) }
        var seen: Set<Int> = [d.lengthAdjustment]
        for adjust in named + (1...16).flatMap({ [d.lengthAdjustment - $0, d.lengthAdjustment + $0] }) where seen.insert(adjust).inserted {
            var v = d
            v.lengthAdjustment = adjust
            out.append((v, meanings[adjust]))
        }
        if d.encoding == .binary && d.lengthFieldLength >= 2 {
            var v = d
            v.endianness = d.endianness == .big ? .little : .big
            out.append((v, "the length is in \(v.endianness.rawValue)-endian byte order"))
        }
        if d.encoding == .binary {
            for width in [1, 2, 3, 4, 8] where width != d.lengthFieldLength {
                var v = d
                v.lengthFieldLength = width
                out.append((v, nil))
            }
        }
        for k in [-1, 1, -2, 2, -4, 4] where d.lengthFieldOffset + k >= 0 {
            var v = d
            v.lengthFieldOffset += k
            out.append((v, nil))
        }
        if !d.magic.isEmpty {
            for k in [-1, 1, -2, 2, -4, 4] where d.magicOffset + k >= 0 {
                var v = d
                v.magicOffset += k
                out.append((v, nil))
            }
        }
        let encodings: [LengthFieldDissector.Encoding] = d.encoding == .binary ? [.ascii, .varint] : [.binary]
        for encoding in encodings {
            var v = d
            v.encoding = encoding
            if encoding == .varint { v.lengthFieldLength = 5 }
            if d.encoding == .varint || d.encoding == .ber { v.lengthFieldLength = 4 }
            out.append((v, nil))
        }
        return out
    }
}
