/// A parsed `--dissector` SPEC: how to cut a stream into messages.
///
/// ```
/// varint[:max=SIZE]
/// delimiter[:SEQ][,max=SIZE]        SEQ: \r\n (default), \n, \0, any escaped text, or hex 0x0d0a
/// lines                             delimiter:\n (a preceding \r stays in the frame)
/// length:offset=N,width=W[,endian=big|little][,encoding=binary|ascii|hex|varint|ber][,adjust=±N]
///        [,magic=HEX[@OFF]][,type=OFF:WIDTH][,max=SIZE][,min=N][,preamble=HEX][,headeronly=N][,bodymagic=HEX]
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
    /// Names for type values, from a protocol file or the preset.
    public var typeNames: [UInt64: String] = [:]
    /// Names for the server's type values where the protocol names them apart (PostgreSQL).
    public var serverTypeNames: [UInt64: String]?

    /// The client's message types that are requests, and the server's that answer one
    /// (`ResponseTimes`); nil: every message. PostgreSQL: a Query or a Sync, answered by
    /// ReadyForQuery (the startup and its password are no request).
    public var requestTypes: Set<UInt64>?
    public var responseTypes: Set<UInt64>?

    /// The names of the type values a direction's messages carry.
    public func typeNames(fromClient: Bool) -> [UInt64: String] { fromClient ? typeNames : serverTypeNames ?? typeNames }

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
            (typeNames, serverTypeNames) = Self.presetTypeNames(name)
            if name == "postgres" {
                requestTypes = [UInt64(UInt8(ascii: "Q")), UInt64(UInt8(ascii: "S"))]
                responseTypes = [UInt64(UInt8(ascii: "Z"))]
            }
        default:
            throw SpecError("unknown dissector '\(head)' in '\(text)'; expected varint, delimiter, lines, length:…, preset:NAME or @FILE")
        }
    }

    /// Built-in protocols: SPEC and what it is.
    public static let presets: [String: (spec: String, about: String)] = [
        "dns": ("length:offset=0,width=2,max=65537", "DNS over TCP (RFC 1035 4.2.2)"),
        "tls": ("length:offset=3,width=2,magic=03@1,type=0:1,max=18437", "TLS records"),
        "mqtt": ("length:offset=1,encoding=varint,type=0:1", "MQTT (remaining length varint)"),
        "postgres": ("", "PostgreSQL v3 (untyped StartupMessage/SSLRequest first)"),
        "mysql": ("length:offset=0,width=3,endian=little,adjust=1", "MySQL packets"),
        "modbus": ("length:offset=4,width=2,magic=0000@2,type=7:1,min=8", "Modbus/TCP (MBAP: protocol identifier 0)"),
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
        "ldap": (
            "length:offset=1,encoding=ber,magic=30,bodymagic=02",
            "LDAP: a SEQUENCE with a BER length (short, or 0x81–0x84 long forms), then the messageID INTEGER"
        ),
        "pptp": ("length:offset=0,width=2,adjust=-2,magic=1a2b3c4d@4,min=16", "PPTP control messages"),
    ]
}
