/// The pieces of the SPEC grammar: heads, options, hex, escapes and sizes.
extension DissectorSpec {

    static func splitHead(_ text: String) -> (String, String?) {
        guard let colon = text.firstIndex(of: ":") else { return (text, nil) }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    /// `key=value` pairs, keys lower-cased; Netty's long names mapped to short ones.
    struct Options {
        var values: [String: String]
        let spec: String

        mutating func take(_ key: String) -> String? { values.removeValue(forKey: key) }

        mutating func int(_ key: String) throws(SpecError) -> Int? {
            guard let raw = take(key) else { return nil }
            guard let value = Int(raw.hasPrefix("+") ? String(raw.dropFirst()) : raw) else {
                throw SpecError("'\(key)=\(raw)' in '\(spec)': expected a whole number")
            }
            return value
        }

        mutating func size(_ key: String, default value: Int) throws(SpecError) -> Int {
            guard let raw = take(key) else { return value }
            guard let bytes = parseSize(raw), bytes > 0 else {
                throw SpecError("'\(key)=\(raw)' in '\(spec)': expected a size such as 65536, 64K, 16M")
            }
            return bytes
        }

        func rejectUnknown() throws(SpecError) {
            if let key = values.keys.sorted().first { throw SpecError("unknown option '\(key)' in '\(spec)'") }
        }
    }

    private static let aliases = [
        "lengthfieldoffset": "offset", "lengthfieldlength": "width", "lengthadjustment": "adjust",
        "maxframelength": "max", "byteorder": "endian", "endianness": "endian", "length": "width",
    ]

    static func options(_ text: String?, spec: String) throws(SpecError) -> Options {
        var values: [String: String] = [:]
        for item in (text ?? "").split(separator: ",") {
            let parts = item.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, !parts[0].isEmpty else { throw SpecError("'\(item)' in '\(spec)': expected key=value") }
            let key = parts[0].trimmed.lowercased()
            values[aliases[key] ?? key] = parts[1].trimmed
        }
        return Options(values: values, spec: spec)
    }

    static func lengthField(_ o: inout Options, spec: String) throws(SpecError) -> LengthFieldDissector {
        let encodingText = o.take("encoding")?.lowercased() ?? "binary"
        guard let encoding = LengthFieldDissector.Encoding(rawValue: encodingText == "decimal" ? "ascii" : encodingText) else {
            throw SpecError("'encoding=\(encodingText)' in '\(spec)': expected binary, ascii, hex, varint or ber")
        }
        guard let offset = try o.int("offset"), offset >= 0, offset <= 1024 else {
            throw SpecError("'\(spec)': offset=N (0…1024) is required")
        }
        var width = try o.int("width") ?? (encoding == .varint || encoding == .ber ? 5 : -1)
        if encoding == .binary && !(1...8).contains(width) { throw SpecError("'\(spec)': width=W (1…8 bytes) is required for binary lengths") }
        if (encoding == .ascii || encoding == .hex) && !(1...16).contains(width) {
            throw SpecError("'\(spec)': width=W (1…16 digits) is required for \(encoding) lengths")
        }
        if encoding == .varint || encoding == .ber { width = 5 }
        let endianText = o.take("endian")?.lowercased() ?? "big"
        guard let endianness = LengthFieldDissector.Endianness(rawValue: endianText == "big_endian" ? "big" : endianText == "little_endian" ? "little" : endianText) else {
            throw SpecError("'endian=\(endianText)' in '\(spec)': expected big or little")
        }
        let adjust = try o.int("adjust") ?? 0
        var magic: [UInt8] = [], magicOffset = 0
        if let raw = o.take("magic") {
            let parts = raw.split(separator: "@", omittingEmptySubsequences: false)
            let offset = parts.count == 2 ? Int(parts[1]) : 0
            guard let bytes = hexBytes(String(parts[0])), !bytes.isEmpty, bytes.count <= InlineBytes.capacity, parts.count <= 2,
                let offset, offset >= 0, offset <= 1024
            else { throw SpecError("'magic=\(raw)' in '\(spec)': expected 1…32 hex bytes, optionally @offset 0…1024 (magic=1a2b@4)") }
            magic = bytes
            magicOffset = offset
        }
        var typeField: (offset: Int, width: Int)?
        if let raw = o.take("type") {
            let parts = raw.split(separator: ":").compactMap { Int($0) }
            guard parts.count == 2, parts[0] >= 0, (1...8).contains(parts[1]) else {
                throw SpecError("'type=\(raw)' in '\(spec)': expected OFFSET:WIDTH with a width of 1…8 bytes")
            }
            typeField = (parts[0], parts[1])
        }
        let maxFrame = try o.size("max", default: 16 << 20)
        let minFrame = try o.int("min") ?? 0
        var preamble: [UInt8] = []
        if let raw = o.take("preamble") {
            guard let bytes = hexBytes(raw), bytes.count <= InlineBytes.capacity else {
                throw SpecError("'preamble=\(raw)' in '\(spec)': expected at most 32 hex bytes")
            }
            preamble = bytes
        }
        var bodyMagic: [UInt8] = []
        if let raw = o.take("bodymagic") {
            guard let bytes = hexBytes(raw), !bytes.isEmpty, bytes.count <= InlineBytes.capacity else {
                throw SpecError("'bodymagic=\(raw)' in '\(spec)': expected 1…32 hex bytes")
            }
            bodyMagic = bytes
        }
        let headerOnly = try o.int("headeronly") ?? 0
        let body = try o.int("body")
        if let body, body < 0 || body > 1024 { throw SpecError("'body=\(body)' in '\(spec)': expected 0…1024") }
        return LengthFieldDissector(
            lengthFieldOffset: offset, lengthFieldLength: width, endianness: endianness, encoding: encoding,
            lengthAdjustment: adjust, magic: magic, magicOffset: magicOffset,
            typeField: typeField, maxFrameLength: maxFrame, minFrameLength: max(0, minFrame), headerOnlyBelow: UInt64(max(0, headerOnly)), preamble: preamble,
            bodyOffset: body, bodyMagic: bodyMagic)
    }

    static func hexBytes(_ text: String) -> [UInt8]? {
        var digits = Array(text.lowercased().utf8)
        if digits.starts(with: Array("0x".utf8)) { digits.removeFirst(2) }
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var i = 0
        while i < digits.count {
            guard let high = hexValue(digits[i]), let low = hexValue(digits[i + 1]) else { return nil }
            bytes.append(high << 4 | low)
            i += 2
        }
        return bytes
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }

    /// `\r\n`, `\n`, `\0`, `\t`, `\\`, `\xHH` escapes, or `0x…` hex.
    static func delimiterBytes(_ text: String, spec: String) throws(SpecError) -> [UInt8] {
        if text.lowercased().hasPrefix("0x") {
            guard let bytes = hexBytes(text), !bytes.isEmpty, bytes.count <= InlineBytes.capacity else {
                throw SpecError("delimiter '\(text)' in '\(spec)': expected 1…32 hex bytes")
            }
            return bytes
        }
        var out: [UInt8] = []
        var chars = Array(text.utf8)[...]
        while let c = chars.popFirst() {
            guard c == 0x5C else { out.append(c); continue }
            switch chars.popFirst() {
            case 0x72: out.append(0x0D)  // r
            case 0x6E: out.append(0x0A)  // n
            case 0x74: out.append(0x09)  // t
            case 0x30: out.append(0x00)  // 0
            case 0x5C: out.append(0x5C)
            case 0x78:  // xHH
                guard chars.count >= 2, let byte = hexBytes(String(decoding: chars.prefix(2), as: UTF8.self))?.first else {
                    throw SpecError("delimiter '\(text)' in '\(spec)': \\x needs two hex digits")
                }
                out.append(byte)
                chars = chars.dropFirst(2)
            default:
                throw SpecError("delimiter '\(text)' in '\(spec)': unknown escape")
            }
        }
        guard !out.isEmpty, out.count <= InlineBytes.capacity else { throw SpecError("'\(spec)': a delimiter has 1…32 bytes") }
        return out
    }
}

/// `65536`, `64K`, `64KiB`, `16M`, `1G`.
public func parseSize(_ text: String) -> Int? {
    var t = text.uppercased()
    if t.hasSuffix("IB") { t.removeLast(2) } else if t.hasSuffix("B") { t.removeLast() }
    var multiplier = 1
    switch t.last {
    case "K": multiplier = 1 << 10
    case "M": multiplier = 1 << 20
    case "G": multiplier = 1 << 30
    default: break
    }
    if multiplier > 1 { t.removeLast() }
    guard let value = Int(t), value >= 0, value <= Int.max / multiplier else { return nil }
    return value * multiplier
}

extension Substring {
    fileprivate var trimmed: String {
        var s = self
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
