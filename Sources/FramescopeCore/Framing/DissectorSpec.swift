/// A parsed `--dissector` SPEC: how to cut a stream into messages.
///
/// ```
/// varint[:max=SIZE]
/// delimiter[:SEQ][,max=SIZE]        SEQ: \r\n (default), \n, \0, any escaped text, or hex 0x0d0a
/// lines                             delimiter:\n (a preceding \r stays in the frame)
/// length:offset=N,width=W[,endian=big|little][,encoding=binary|ascii|hex|varint][,adjust=±N]
///        [,magic=HEX[@OFF]][,type=OFF:WIDTH][,max=SIZE][,min=N][,preamble=HEX][,headeronly=N]
/// preset:NAME                       see `DissectorSpec.presets`
/// ```
/// Frame length for `length` = offset + width + value + adjust (Netty's LengthFieldBasedFrameDecoder;
/// its long names `lengthFieldOffset`, `lengthFieldLength`, `lengthAdjustment`, `maxFrameLength`
/// and `byteOrder` are accepted too).
public struct DissectorSpec: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case lengthField(LengthFieldDissector)
        case delimiter(DelimiterDissector)
        case postgres(maxFrameLength: Int)
    }

    public var kind: Kind
    /// A short name for reports: the preset or protocol-file name, else the SPEC text.
    public var name: String
    /// The SPEC as given (or as a preset expands).
    public var text: String
    /// Names for type values, from a protocol file.
    public var typeNames: [UInt64: String] = [:]

    public init(kind: Kind, name: String, text: String, typeNames: [UInt64: String] = [:]) {
        self.kind = kind
        self.name = name
        self.text = text
        self.typeNames = typeNames
    }

    /// A fresh dissector for one direction.
    public func makeDissector(isClient: Bool) -> AnyDissector {
        switch kind {
        case .lengthField(let d): .lengthField(d)
        case .delimiter(let d): .delimiter(d)
        case .postgres(let max): .postgres(PostgresDissector(isClient: isClient, maxFrameLength: max))
        }
    }

    /// Whether frames have a header and a body (the part a protobuf check reads).
    public var hasBody: Bool {
        if case .lengthField = kind { return true }
        return false
    }

    /// Protobuf's `writeDelimitedTo` framing: a varint length, then the message.
    public var isVarintDelimited: Bool {
        guard case .lengthField(let d) = kind else { return false }
        return d.encoding == .varint && d.lengthFieldOffset == 0 && d.lengthAdjustment == 0 && d.magic.isEmpty && d.typeField == nil
            && d.bodyOffset == nil
    }

    /// Whether frames carry a type field (per-type counts are reported).
    public var hasTypeField: Bool {
        switch kind {
        case .lengthField(let d): d.typeField != nil
        case .delimiter: false
        case .postgres: true
        }
    }
}

/// A SPEC that could not be parsed; the description names the problem in one line.
public struct SpecError: Error, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

extension DissectorSpec {
    /// Parses every form but `@FILE` (the command line reads files).
    public init(parsing text: String) throws(SpecError) {
        let (head, rest) = Self.splitHead(text)
        switch head.lowercased() {
        case "varint":
            var options = try Self.options(rest, spec: text)
            let max = try options.size("max", default: 16 << 20)
            try options.rejectUnknown()
            self.init(kind: .lengthField(LengthFieldDissector(encoding: .varint, maxFrameLength: max)), name: "varint", text: text)
        case "delimiter":
            var sequence: [UInt8] = [0x0D, 0x0A]
            var optionText = rest
            if let rest, let first = rest.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).first, !first.contains("=") {
                sequence = try Self.delimiterBytes(String(first), spec: text)
                optionText = rest.count > first.count ? String(rest.dropFirst(first.count + 1)) : nil
            }
            var options = try Self.options(optionText, spec: text)
            let max = try options.size("max", default: 1 << 20)
            try options.rejectUnknown()
            self.init(kind: .delimiter(DelimiterDissector(delimiter: sequence, maxFrameLength: max)), name: text, text: text)
        case "lines":
            var options = try Self.options(rest, spec: text)
            let max = try options.size("max", default: 1 << 20)
            try options.rejectUnknown()
            self.init(kind: .delimiter(DelimiterDissector(delimiter: [0x0A], maxFrameLength: max)), name: "lines", text: text)
        case "length":
            var options = try Self.options(rest, spec: text)
            self.init(kind: .lengthField(try Self.lengthField(&options, spec: text)), name: text, text: text)
            try options.rejectUnknown()
        case "preset":
            guard let name = rest?.lowercased(), let preset = Self.presets[name] else {
                throw SpecError("unknown preset '\(rest ?? "")' in '\(text)'; presets: \(Self.presets.keys.sorted().joined(separator: ", "))")
            }
            if name == "postgres" {
                self.init(kind: .postgres(maxFrameLength: 16 << 20), name: "postgres", text: text)
            } else {
                try self.init(parsing: preset.spec)
                self.name = name
                self.text = text
            }
        default:
            throw SpecError("unknown dissector '\(head)' in '\(text)'; expected varint, delimiter, lines, length:…, preset:NAME or @FILE")
        }
    }

    /// Built-in protocols: SPEC and what it is.
    public static let presets: [String: (spec: String, about: String)] = [
        "dns": ("length:offset=0,width=2,max=65537", "DNS over TCP (RFC 1035 4.2.2)"),
        "tls": ("length:offset=3,width=2,type=0:1,max=18437", "TLS records"),
        "mqtt": ("length:offset=1,encoding=varint,type=0:1", "MQTT (remaining length varint)"),
        "postgres": ("", "PostgreSQL v3 (untyped StartupMessage/SSLRequest first)"),
        "mysql": ("length:offset=0,width=3,endian=little,adjust=1", "MySQL packets"),
        "modbus": ("length:offset=4,width=2,type=7:1,min=8", "Modbus/TCP (MBAP)"),
        "bgp": ("length:offset=16,width=2,adjust=-18,magic=ffffffffffffffffffffffffffffffff,type=18:1,min=19,max=65535", "BGP-4"),
        "tpkt": ("length:offset=2,width=2,adjust=-4,magic=0300,min=7", "TPKT (RFC 1006: ISO-TSAP, S7comm, RDP)"),
        "kafka": ("length:offset=0,width=4", "Kafka (size-prefixed requests and responses)"),
        "http2": (
            "length:offset=0,width=3,adjust=6,type=3:1,preamble=505249202a20485454502f322e300d0a0d0a534d0d0a0d0a",
            "HTTP/2 frames after the client preface"
        ),
        "nbss": ("length:offset=1,width=3", "NetBIOS session service (SMB)"),
        "iec104": ("length:offset=1,width=1,magic=68,min=6", "IEC 60870-5-104 APDUs"),
        "openflow": ("length:offset=2,width=2,adjust=-4,type=1:1,min=8", "OpenFlow"),
        "opcua": ("length:offset=4,width=4,endian=little,adjust=-8,min=8", "OPC UA binary (TCP transport)"),
        "hislip": ("length:offset=8,width=8,magic=4853,type=2:1", "HiSLIP"),
        "enip": ("length:offset=2,width=2,endian=little,adjust=20,type=0:2", "EtherNet/IP encapsulation"),
        "amqp": ("length:offset=3,width=4,adjust=1,type=0:1", "AMQP 0-9-1 frames (frame-end byte included)"),
        "git": ("length:offset=0,width=4,encoding=hex,adjust=-4,headeronly=3", "git pkt-line (flush/delim/end packets are 4 bytes)"),
        "ldap": ("length:offset=2,width=4,magic=3084", "LDAP with 4-byte BER lengths (Active Directory)"),
        "pptp": ("length:offset=0,width=2,adjust=-2,magic=1a2b3c4d@4,min=16", "PPTP control messages"),
    ]

    // MARK: Parsing helpers

    private static func splitHead(_ text: String) -> (String, String?) {
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

    private static func options(_ text: String?, spec: String) throws(SpecError) -> Options {
        var values: [String: String] = [:]
        for item in (text ?? "").split(separator: ",") {
            let parts = item.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, !parts[0].isEmpty else { throw SpecError("'\(item)' in '\(spec)': expected key=value") }
            let key = parts[0].trimmed.lowercased()
            values[aliases[key] ?? key] = parts[1].trimmed
        }
        return Options(values: values, spec: spec)
    }

    private static func lengthField(_ o: inout Options, spec: String) throws(SpecError) -> LengthFieldDissector {
        let encodingText = o.take("encoding")?.lowercased() ?? "binary"
        guard let encoding = LengthFieldDissector.Encoding(rawValue: encodingText == "decimal" ? "ascii" : encodingText) else {
            throw SpecError("'encoding=\(encodingText)' in '\(spec)': expected binary, ascii, hex or varint")
        }
        guard let offset = try o.int("offset"), offset >= 0, offset <= 1024 else {
            throw SpecError("'\(spec)': offset=N (0…1024) is required")
        }
        var width = try o.int("width") ?? (encoding == .varint ? 5 : -1)
        if encoding == .binary && !(1...8).contains(width) { throw SpecError("'\(spec)': width=W (1…8 bytes) is required for binary lengths") }
        if (encoding == .ascii || encoding == .hex) && !(1...16).contains(width) {
            throw SpecError("'\(spec)': width=W (1…16 digits) is required for \(encoding) lengths")
        }
        if encoding == .varint { width = 5 }
        let endianText = o.take("endian")?.lowercased() ?? "big"
        guard let endianness = LengthFieldDissector.Endianness(rawValue: endianText == "big_endian" ? "big" : endianText == "little_endian" ? "little" : endianText) else {
            throw SpecError("'endian=\(endianText)' in '\(spec)': expected big or little")
        }
        let adjust = try o.int("adjust") ?? 0
        var magic: [UInt8] = [], magicOffset = 0
        if let raw = o.take("magic") {
            let parts = raw.split(separator: "@")
            guard let bytes = hexBytes(String(parts[0])), !bytes.isEmpty, bytes.count <= InlineBytes.capacity, parts.count <= 2,
                parts.count == 1 || Int(parts[1]) != nil
            else { throw SpecError("'magic=\(raw)' in '\(spec)': expected 1…32 hex bytes, optionally @offset (magic=1a2b@4)") }
            magic = bytes
            magicOffset = parts.count == 2 ? Int(parts[1])! : 0
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
        let headerOnly = try o.int("headeronly") ?? 0
        let body = try o.int("body")
        if let body, body < 0 || body > 1024 { throw SpecError("'body=\(body)' in '\(spec)': expected 0…1024") }
        return LengthFieldDissector(
            lengthFieldOffset: offset, lengthFieldLength: width, endianness: endianness, encoding: encoding,
            lengthAdjustment: adjust, magic: magic, magicOffset: magicOffset,
            typeField: typeField, maxFrameLength: maxFrame, minFrameLength: max(0, minFrame), headerOnlyBelow: UInt64(max(0, headerOnly)), preamble: preamble,
            bodyOffset: body)
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

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }

    /// `\r\n`, `\n`, `\0`, `\t`, `\\`, `\xHH` escapes, or `0x…` hex.
    private static func delimiterBytes(_ text: String, spec: String) throws(SpecError) -> [UInt8] {
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
