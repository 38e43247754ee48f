/// What the bytes of a malformed header look like, in one line for the engineer: the usual
/// causes are another protocol on the port (text, HTTP, JSON, TLS), a header written in host
/// byte order, or a header that is not where the framing expects it.
public enum HeaderForensics {
    /// `bytes` start at the malformed header (up to a few hundred, for a magic further on).
    public static func describe(_ bytes: [UInt8], reason: MalformedReason?, dissector: AnyDissector) -> String? {
        switch dissector {
        case .lengthField(let d):
            if let said = lengthField(bytes, reason: reason, d) { return said }
            // TLS's own framing (a 2-byte length at 3) sees records: a bad one is no other protocol.
            let isTLS = d.encoding == .binary && d.lengthFieldOffset == 3 && d.lengthFieldLength == 2
            return foreignProtocol(bytes, textIsExpected: d.encoding == .ascii || d.encoding == .hex, tlsIsExpected: isTLS)
        case .delimiter:
            return foreignProtocol(bytes, textIsExpected: true)
        case .postgres:
            return foreignProtocol(bytes, textIsExpected: false)
        }
    }

    /// Bytes of another protocol (or of no protocol): TLS, HTTP, JSON, printable text.
    static func foreignProtocol(_ b: [UInt8], textIsExpected: Bool, tlsIsExpected: Bool = false) -> String? {
        if !tlsIsExpected, b.count >= 3, (0x14...0x17).contains(b[0]), b[1] == 3, b[2] <= 4 {
            let kinds: [UInt8: String] = [0x14: "change cipher spec", 0x15: "alert", 0x16: "handshake", 0x17: "application data"]
            return "a TLS record (\(kinds[b[0]]!), version 3.\(b[2])): the connection is encrypted, not this framing"
        }
        let head = b.prefix(16)
        let text = String(decoding: head.map { (0x20...0x7E).contains($0) ? $0 : 0x2E }, as: UTF8.self)
        for method in ["GET ", "POST ", "PUT ", "HEAD ", "DELETE ", "OPTIONS ", "PATCH ", "CONNECT ", "HTTP/1."] where text.hasPrefix(method) {
            return "an HTTP \(method == "HTTP/1." ? "response" : "request") (\"\(text)\"): HTTP on this connection, not this framing"
        }
        let printable = head.filter { (0x20...0x7E).contains($0) || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }.count
        guard head.count >= 4, printable * 8 >= head.count * 7 else { return nil }
        if textIsExpected { return nil }
        if let first = head.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }), first == 0x7B || first == 0x5B {
            return "JSON text (\"\(text)\")"
        }
        return "printable text (\"\(text)\")"
    }

    static func lengthField(_ b: [UInt8], reason: MalformedReason?, _ d: LengthFieldDissector) -> String? {
        let magic = d.magic.array
        let at = d.magicOffset
        if magic.count >= 2, b.count >= at + magic.count {
            let seen = Array(b[at..<at + magic.count])
            if seen != magic && seen == magic.reversed() {
                let other = d.endianness == .big ? "little" : "big"
                return "magic in \(other)-endian byte order (\(hexDigits(seen)) for \(hexDigits(magic))): this sender wrote the header in host order"
            }
        }
        if !magic.isEmpty, b.count > at + magic.count {
            // The magic a few bytes on: bytes inserted before a header, or a previous length short by as many.
            for k in 1..<min(b.count - at - magic.count + 1, 257) where b[(at + k)..<(at + k + magic.count)].elementsEqual(magic) {
                return "the magic appears \(k) byte\(k == 1 ? "" : "s") further on: this header is not where the previous frame's length put it"
            }
        }
        if d.encoding == .binary && d.lengthFieldLength >= 2 && reason == .lengthTooLarge, b.count >= d.lengthFieldOffset + d.lengthFieldLength {
            let field = b[d.lengthFieldOffset..<(d.lengthFieldOffset + d.lengthFieldLength)]
            let swapped = field.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            if swapped <= UInt64(d.maxFrameLength) {
                let other = d.endianness == .big ? "little" : "big"
                return "the length field reads \(swapped) in \(other)-endian byte order: this sender wrote the header in host order"
            }
        }
        return nil
    }
}
