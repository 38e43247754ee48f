import FramescopeCore

/// Writes messages framed by any length-field or delimiter SPEC (`synth --spec`): the length
/// field in its encoding, byte order and adjustment, the magic, the body magic, a type from the
/// protocol file's values (else a few small ones), and the header's other bytes filled the way
/// real headers fill them: a version, reserved zeros, a sequence number, or noise. How each run
/// of other bytes is filled, and whether bodies are text or binary, is fixed per capture by the
/// seed, so one capture shows one protocol.
public struct SpecFrameWriter {
    enum Fill: CaseIterable {
        case zero, constant, counter, noise
    }

    enum Body {
        /// Letters (a delimiter SPEC's lines; some length protocols carry text).
        case text
        /// Random bytes.
        case binary
        /// A protobuf message (field 1: bytes): varint framing carries protobuf.
        case protobuf
    }

    let spec: DissectorSpec
    /// How each header byte outside the length field, magic and type is filled (nil: it is one
    /// of those).
    private var fills: [Fill?] = []
    private var constants: [UInt8] = []
    private let typeValues: [UInt64]
    let body: Body
    private var sequence: UInt64 = 0

    /// The largest body a frame can carry (the field's range, the SPEC's maximum).
    let largestBody: Int

    public struct Unsupported: Error, CustomStringConvertible {
        public var description: String
    }

    init(spec: DissectorSpec, random: inout SplitMix64) throws(Unsupported) {
        self.spec = spec
        switch spec.kind {
        case .postgres:
            throw Unsupported(description: "synth --spec makes length-field and delimiter framings; preset:postgres is neither")
        case .delimiter(let d):
            typeValues = []
            body = d.delimiter.count == 1 && d.delimiter[0] >= 0x20 ? .binary : .text
            largestBody = min(d.maxFrameLength - d.delimiter.count, 64 << 10)
        case .lengthField(let d):
            if d.bodyOffset != nil { throw Unsupported(description: "synth --spec does not make SPECs with body=N") }
            let names = spec.typeNames.keys.sorted()
            let typeCapacity = d.typeField.map { $0.width >= 8 ? UInt64.max : (UInt64(1) << (8 * UInt64($0.width))) - 1 } ?? 0
            typeValues = names.isEmpty ? (1...UInt64(min(8, max(1, typeCapacity)))).map { $0 } : names
            body = d.encoding == .varint && d.lengthFieldOffset == 0 ? .protobuf : random.next() % 2 == 0 ? .text : .binary
            let header = Self.fixedHeaderLength(d)
            let fieldRoom = Self.largestValue(d)
            // The body a frame can carry once the header and adjustment are paid for.
            let byValue = fieldRoom >= UInt64(Int32.max) ? Int(Int32.max) : Int(fieldRoom) + d.lengthAdjustment - Self.headerAfterField(d)
            largestBody = max(0, min(byValue, d.maxFrameLength - header, 1 << 20))
            for i in 0..<header {
                let claimed = (d.lengthFieldOffset..<(d.lengthFieldOffset + Self.fieldWidth(d, 0))).contains(i)
                    || (d.magicOffset..<(d.magicOffset + d.magic.count)).contains(i)
                    || d.typeField.map { ($0.offset..<($0.offset + $0.width)).contains(i) } ?? false
                fills.append(claimed ? nil : Fill.allCases[Int(random.next() % 4)])
                constants.append(UInt8(truncatingIfNeeded: random.next()))
            }
            // A run of free bytes is one field: fill it one way.
            for i in fills.indices.dropFirst() where fills[i] != nil && fills[i - 1] != nil { fills[i] = fills[i - 1] }
        }
    }

    /// The smallest body a frame may carry (the SPEC's minimum frame, the body magic, header-only values).
    var smallestBody: Int {
        guard case .lengthField(let d) = spec.kind else { return 1 }
        let header = Self.fixedHeaderLength(d)
        // The value (body + header after the field - adjust) is never negative, and a value below
        // `headeronly` would be a header-only frame.
        let least = max(d.bodyMagic.count, d.minFrameLength - header, d.lengthAdjustment - Self.headerAfterField(d))
        return max(least + (d.headerOnlyBelow > 0 ? Int(d.headerOnlyBelow) : 0), 1)
    }

    /// Appends one message with a body of about `size` bytes (clamped to what the SPEC allows).
    mutating func append(bodySize size: Int, to out: inout [UInt8], text: [UInt8], random: inout SplitMix64) {
        let size = max(smallestBody, min(size, largestBody))
        switch spec.kind {
        case .postgres:
            return
        case .delimiter(let d):
            let start = Int(random.next() % UInt64(text.count - size))
            for i in 0..<size {
                var byte = body == .text ? text[start + i] : UInt8(truncatingIfNeeded: random.next())
                if byte == d.delimiter[0] { byte = byte == 0x61 ? 0x62 : 0x61 }  // never the delimiter
                out.append(byte)
            }
            out.append(contentsOf: d.delimiter.array)
        case .lengthField(let d):
            appendFrame(d, bodySize: size, to: &out, text: text, random: &random)
        }
    }

    private mutating func appendFrame(_ d: LengthFieldDissector, bodySize: Int, to out: inout [UInt8], text: [UInt8], random: inout SplitMix64) {
        let header = Self.fixedHeaderLength(d)
        var bodyBytes = d.bodyMagic.array
        switch body {
        case .protobuf:
            let textLength = max(0, bodySize - 1 - SyntheticTraffic.varintLength(bodySize))
            bodyBytes.append(0x0A)
            bodyBytes.appendVarint(textLength)
            let start = Int(random.next() % UInt64(text.count - textLength))
            bodyBytes += text[start..<(start + textLength)]
        case .text:
            let start = Int(random.next() % UInt64(text.count - bodySize))
            bodyBytes += text[start..<(start + max(0, bodySize - bodyBytes.count))]
        case .binary:
            for _ in bodyBytes.count..<max(bodyBytes.count, bodySize) { bodyBytes.append(UInt8(truncatingIfNeeded: random.next())) }
        }
        // frame = fieldEnd + value + adjust, and frame = header + body (a varint's or BER's own
        // width moves the body with it).
        let variable = d.encoding == .varint || d.encoding == .ber
        let value = UInt64(max(0, Self.headerAfterField(d) + bodyBytes.count - d.lengthAdjustment))
        var frame = [UInt8](repeating: 0, count: variable ? d.lengthFieldOffset : header)
        sequence &+= 1
        for i in frame.indices {
            switch fills[i] {
            case nil: break
            case .zero: frame[i] = 0
            case .constant: frame[i] = constants[i]
            case .noise: frame[i] = UInt8(truncatingIfNeeded: random.next())
            case .counter:
                // Big-endian over its run: the run's last byte is the sequence's low byte.
                var end = i
                while end + 1 < frame.count && fills[end + 1] == .counter { end += 1 }
                frame[i] = UInt8(truncatingIfNeeded: sequence >> (8 * UInt64(end - i)))
            }
        }
        for i in 0..<d.magic.count { frame[d.magicOffset + i] = d.magic[i] }
        if let field = d.typeField {
            let type = typeValues[Int(random.next() % UInt64(typeValues.count))]
            for i in 0..<field.width { frame[field.offset + i] = UInt8(truncatingIfNeeded: type >> (8 * UInt64(field.width - 1 - i))) }
        }
        let field = Self.encode(value, d)
        if variable {
            frame += field
        } else {
            frame.replaceSubrange(d.lengthFieldOffset..<(d.lengthFieldOffset + d.lengthFieldLength), with: field)
        }
        out += frame
        out += bodyBytes
    }

    /// The header's fixed part: up to the end of the length field, magic and type.
    static func fixedHeaderLength(_ d: LengthFieldDissector) -> Int {
        max(d.lengthFieldOffset + fieldWidth(d, 0), d.magicOffset + d.magic.count, d.typeField.map { $0.offset + $0.width } ?? 0)
    }

    /// Header bytes after a fixed-width length field (a type or flags there); none after a
    /// varint or BER length, whose width moves what follows.
    static func headerAfterField(_ d: LengthFieldDissector) -> Int {
        d.encoding == .varint || d.encoding == .ber ? 0 : fixedHeaderLength(d) - d.lengthFieldOffset - d.lengthFieldLength
    }

    /// The length field's width for `value` (varint and BER grow with it).
    static func fieldWidth(_ d: LengthFieldDissector, _ value: UInt64) -> Int {
        switch d.encoding {
        case .varint: SyntheticTraffic.varintLength(Int(value))
        case .ber: value < 0x80 ? 1 : 1 + (64 - value.leadingZeroBitCount + 7) / 8
        default: d.lengthFieldLength
        }
    }

    /// The largest value the field can hold.
    static func largestValue(_ d: LengthFieldDissector) -> UInt64 {
        switch d.encoding {
        case .binary: d.lengthFieldLength >= 8 ? UInt64.max : (UInt64(1) << (8 * UInt64(d.lengthFieldLength))) - 1
        case .ascii: d.lengthFieldLength >= 19 ? UInt64.max : (0..<d.lengthFieldLength).reduce(UInt64(1)) { r, _ in r * 10 } - 1
        case .hex: d.lengthFieldLength >= 16 ? UInt64.max : (UInt64(1) << (4 * UInt64(d.lengthFieldLength))) - 1
        case .varint: (1 << 35) - 1
        case .ber: UInt64(UInt32.max)
        }
    }

    static func encode(_ value: UInt64, _ d: LengthFieldDissector) -> [UInt8] {
        switch d.encoding {
        case .binary:
            let big = (0..<d.lengthFieldLength).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(d.lengthFieldLength - 1 - $0))) }
            return d.endianness == .big ? big : big.reversed()
        case .ascii, .hex:
            let digits = Array(String(value, radix: d.encoding == .ascii ? 10 : 16).utf8)
            return [UInt8](repeating: 0x30, count: max(0, d.lengthFieldLength - digits.count)) + digits
        case .varint:
            var out: [UInt8] = []
            out.appendVarint(Int(value))
            return out
        case .ber:
            if value < 0x80 { return [UInt8(value)] }
            let count = (64 - value.leadingZeroBitCount + 7) / 8
            return [0x80 | UInt8(count)] + (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(count - 1 - $0))) }
        }
    }
}
