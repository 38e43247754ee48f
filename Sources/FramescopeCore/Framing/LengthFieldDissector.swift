/// Length-field framing with Netty's `LengthFieldBasedFrameDecoder` vocabulary:
/// frame length = `lengthFieldOffset` + `lengthFieldLength` + value + `lengthAdjustment`.
///
/// ```
/// ┌─ lengthFieldOffset ─┬─ length field ─┬──────── rest of the frame ────────┐
/// │ magic? type?        │ value          │ value + adjustment bytes          │
/// ```
/// For `.varint` the field's length is the varint's own length (1–5 bytes), so MQTT is
/// `offset=1,encoding=varint` and protobuf's writeDelimitedTo framing is `offset=0,encoding=varint`.
public struct LengthFieldDissector: FrameDissector, Sendable, Hashable {
    public enum Encoding: String, Sendable, CaseIterable {
        case binary
        /// `lengthFieldLength` decimal digits, e.g. "0042" (leading spaces allowed).
        case ascii
        /// `lengthFieldLength` hexadecimal digits, e.g. git's pkt-line "003f".
        case hex
        /// Protobuf/LEB128 varint, at most 5 bytes.
        case varint
        /// ASN.1 BER definite length: one byte below 0x80, or 0x81–0x84 and that many bytes,
        /// big-endian (LDAP, SNMP over TCP). The indefinite form 0x80 is malformed.
        case ber
    }

    public enum Endianness: String, Sendable { case big, little }

    public var lengthFieldOffset: Int
    public var lengthFieldLength: Int
    public var endianness: Endianness
    public var encoding: Encoding
    public var lengthAdjustment: Int
    public var magic: InlineBytes
    /// Where `magic` sits in the frame (0 for most protocols; PPTP's cookie is at 4).
    public var magicOffset: Int
    /// Where a message type / command ID sits (offset, width ≤ 8), read big-endian.
    public var typeField: (offset: Int, width: Int)?
    public var maxFrameLength: Int
    /// Shortest valid frame (a protocol's fixed header); 0 = just the length field's end.
    public var minFrameLength: Int
    /// Length values below this mean a frame of just the header (git's flush-pkt "0000",
    /// delim-pkt "0001" and response-end "0002": 3). 0 turns it off.
    public var headerOnlyBelow: UInt64
    /// Bytes a stream may start with that are not a frame (the HTTP/2 client preface).
    public var preamble: InlineBytes
    /// Where the body starts in the frame; nil: after the last of length field, magic and type.
    public var bodyOffset: Int?
    /// Bytes every body starts with, right after a length of any width (LDAP's messageID tag
    /// `02` after a BER length): a magic whose offset depends on the length's form.
    public var bodyMagic: InlineBytes

    public init(
        lengthFieldOffset: Int = 0, lengthFieldLength: Int = 4, endianness: Endianness = .big, encoding: Encoding = .binary,
        lengthAdjustment: Int = 0, magic: [UInt8] = [], magicOffset: Int = 0, typeField: (offset: Int, width: Int)? = nil,
        maxFrameLength: Int = 16 << 20, minFrameLength: Int = 0, headerOnlyBelow: UInt64 = 0, preamble: [UInt8] = [],
        bodyOffset: Int? = nil, bodyMagic: [UInt8] = []
    ) {
        self.lengthFieldOffset = lengthFieldOffset
        self.lengthFieldLength = encoding == .varint || encoding == .ber ? 5 : lengthFieldLength
        self.endianness = endianness
        self.encoding = encoding
        self.lengthAdjustment = lengthAdjustment
        precondition(magic.count <= InlineBytes.capacity && preamble.count <= InlineBytes.capacity, "magic and preamble hold at most 32 bytes")
        self.magic = InlineBytes(magic)!
        self.magicOffset = magicOffset
        self.typeField = typeField
        self.maxFrameLength = maxFrameLength
        self.minFrameLength = minFrameLength
        self.headerOnlyBelow = headerOnlyBelow
        self.preamble = InlineBytes(preamble)!
        self.bodyOffset = bodyOffset
        precondition(bodyMagic.count <= InlineBytes.capacity, "a body magic holds at most 32 bytes")
        self.bodyMagic = InlineBytes(bodyMagic)!
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.lengthFieldOffset == b.lengthFieldOffset && a.lengthFieldLength == b.lengthFieldLength
            && a.endianness == b.endianness && a.encoding == b.encoding && a.lengthAdjustment == b.lengthAdjustment
            && a.magic == b.magic && a.magicOffset == b.magicOffset && a.typeField?.offset == b.typeField?.offset && a.typeField?.width == b.typeField?.width
            && a.maxFrameLength == b.maxFrameLength && a.minFrameLength == b.minFrameLength && a.headerOnlyBelow == b.headerOnlyBelow && a.preamble == b.preamble
            && a.bodyOffset == b.bodyOffset && a.bodyMagic == b.bodyMagic
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(lengthFieldOffset)
        hasher.combine(lengthFieldLength)
        hasher.combine(encoding)
        hasher.combine(lengthAdjustment)
        hasher.combine(magic)
        hasher.combine(typeField?.offset)
        hasher.combine(bodyMagic)
    }

    /// The bytes `decode` may look at: the header's fields, and a body magic after the longest
    /// length field (a BER length of four bytes puts LDAP's messageID tag at byte 7, past the
    /// fields' six: the frame cutter buffered six and trapped, found by the fuzz smoke run).
    public var headerLength: Int {
        let bodyMagicEnd = bodyMagic.isEmpty ? 0 : (bodyOffset ?? fieldsEnd) + bodyMagic.count
        return max(fieldsEnd, preamble.count, bodyMagicEnd)
    }

    /// Where the last of the length field (at its longest), the magic and the type field ends.
    public var fieldsEnd: Int {
        max(lengthFieldOffset + lengthFieldLength, magicOffset + magic.count, typeField.map { $0.offset + $0.width } ?? 0)
    }

    /// A stream may start with the preamble.
    public var hasStreamStart: Bool { !preamble.isEmpty }

    /// `maxFrameLength` for a varint length at the start and nothing else (`--dissector varint`):
    /// no magic, type field, adjustment, floor or body offset (the frame cutter and recovery's
    /// search decode such frames on a path of their own, `PlainVarintDissector`).
    var plainVarintLimit: Int? {
        let plain = encoding == .varint && lengthFieldOffset == 0 && lengthAdjustment == 0 && magic.isEmpty && magicOffset == 0 && typeField == nil
            && headerOnlyBelow == 0 && minFrameLength <= 1 && bodyOffset == nil && bodyMagic.isEmpty
        return plain ? maxFrameLength : nil
    }

    @inline(__always)  // (a call passes the 200-byte dissector by copy: see `decodeFrame`)
    public func decode(_ b: UnsafeRawBufferPointer, consumed: Int, atStreamStart: inout Bool) -> DecodeStep {
        if atStreamStart && !preamble.isEmpty {
            let n = min(preamble.count, b.count)
            var matches = true
            for i in 0..<n where b[i] != preamble[i] { matches = false }
            if matches {
                if n < preamble.count { return .needMoreData(scanned: 0) }
                atStreamStart = false
                return .preamble(length: preamble.count)
            }
            atStreamStart = false
        }
        return decodeFrame(b)
    }

    /// Decodes one frame header (no preamble handling). Inlined: as a call it copied the whole
    /// dissector to pass it, once a frame and, in recovery's search, once an offset.
    @inline(__always)
    func decodeFrame(_ b: UnsafeRawBufferPointer) -> DecodeStep {
        // Magic first: a mismatch is reported as soon as the bytes show it.
        if let step = Self.check(magic, at: magicOffset, in: b) { return step }

        let fieldEnd: Int
        let value: UInt64
        switch Self.readLength(b, start: lengthFieldOffset, lengthFieldLength: lengthFieldLength, encoding: encoding, endianness: endianness) {
        case .needMore: return .needMoreData(scanned: 0)
        case .malformed(let reason): return .malformed(reason)
        case .value(let v, let end):
            value = v
            fieldEnd = end
        }
        guard value <= UInt64(maxFrameLength) else { return .malformed(.lengthTooLarge) }
        var total = fieldEnd + Int(value) + lengthAdjustment
        if value < headerOnlyBelow { total = fieldEnd }
        // A frame holds at least what was read to decide on it: the length field and the magic.
        guard total >= max(fieldEnd, minFrameLength, magicOffset + magic.count), total > 0 else {
            return .malformed(.lengthSmallerThanHeader)
        }
        guard total <= maxFrameLength else { return .malformed(.lengthTooLarge) }
        var type: UInt64?
        if let field = typeField, field.offset + field.width <= total {
            guard b.count >= field.offset + field.width else { return .needMoreData(scanned: 0) }
            type = (0..<field.width).reduce(UInt64(0)) { $0 << 8 | UInt64(b[field.offset + $1]) }
        }
        let header = max(fieldEnd, magicOffset + magic.count, typeField.map { $0.offset + $0.width } ?? 0)
        let body = min(total, bodyOffset ?? header)
        if !bodyMagic.isEmpty {
            guard body + bodyMagic.count <= total else { return .malformed(.lengthSmallerThanHeader) }
            if let step = Self.check(bodyMagic, at: body, in: b) { return step }
        }
        return .frame(length: total, type: type, body: body)
    }

    /// nil when `expected` is at `offset`; bad magic as soon as a byte there differs, else more data.
    @inline(__always)
    private static func check(_ expected: InlineBytes, at offset: Int, in b: UnsafeRawBufferPointer) -> DecodeStep? {
        let seen = max(0, min(expected.count, b.count - offset))
        for i in 0..<seen where b[offset + i] != expected[i] { return .malformed(.badMagic) }
        return seen < expected.count ? .needMoreData(scanned: 0) : nil
    }

    /// The length of a frame starting at `b`'s first byte (no preamble handling): nil when more
    /// bytes are needed, -1 when the header is malformed.
    func frameLength(_ b: UnsafeRawBufferPointer) -> Int? {
        switch decodeFrame(b) {
        case .frame(let length, _, _), .preamble(let length): length
        case .needMoreData: nil
        case .malformed: -1
        }
    }

    private enum LengthRead {
        case needMore
        case malformed(MalformedReason)
        case value(UInt64, fieldEnd: Int)
    }

    /// Static, given the fields it reads: a method took the whole dissector, copied for the call.
    private static func readLength(
        _ b: UnsafeRawBufferPointer, start: Int, lengthFieldLength: Int, encoding: Encoding, endianness: Endianness
    ) -> LengthRead {
        if encoding == .varint {
            var value: UInt64 = 0
            for i in 0..<5 {
                guard start + i < b.count else { return .needMore }
                let byte = b[start + i]
                value |= UInt64(byte & 0x7F) << (7 * UInt64(i))
                if byte & 0x80 == 0 { return .value(value, fieldEnd: start + i + 1) }
            }
            return .malformed(.varintTooLong)
        }
        if encoding == .ber {
            guard start < b.count else { return .needMore }
            let first = b[start]
            if first < 0x80 { return .value(UInt64(first), fieldEnd: start + 1) }
            let count = Int(first & 0x7F)
            guard (1...4).contains(count) else { return .malformed(.badBERLength) }
            guard b.count > start + count else { return .needMore }
            let value = (1...count).reduce(UInt64(0)) { $0 << 8 | UInt64(b[start + $1]) }
            return .value(value, fieldEnd: start + 1 + count)
        }
        let end = start + lengthFieldLength
        guard b.count >= end else { return .needMore }
        var value: UInt64 = 0
        switch encoding {
        case .binary:
            for i in 0..<lengthFieldLength {
                let byte = endianness == .big ? b[start + i] : b[end - 1 - i]
                value = value << 8 | UInt64(byte)
            }
        case .ascii, .hex:
            let radix: UInt64 = encoding == .ascii ? 10 : 16
            var seenDigit = false
            for i in start..<end {
                let c = b[i]
                if c == 0x20 && !seenDigit { continue }  // leading spaces
                guard let digit = Self.digit(c, radix: radix) else { return .malformed(.nonDigitLength) }
                seenDigit = true
                value = value &* radix &+ digit
            }
            if !seenDigit { return .malformed(.nonDigitLength) }
        case .varint, .ber:
            break
        }
        return .value(value, fieldEnd: end)
    }

    private static func digit(_ c: UInt8, radix: UInt64) -> UInt64? {
        switch c {
        case 0x30...0x39: return UInt64(c - 0x30)
        case 0x61...0x66 where radix == 16: return UInt64(c - 0x61 + 10)
        case 0x41...0x46 where radix == 16: return UInt64(c - 0x41 + 10)
        default: return nil
        }
    }
}
