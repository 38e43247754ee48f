import FramescopeCore

/// Builds TCP packets byte by byte, for tests and synthetic captures.
public struct PacketBuilder {
    public enum Link: Sendable {
        case ethernet(vlanTags: [UInt16] = [])
        case linuxSLL
        case linuxSLL2
        case null
        case raw

        public var linkType: LinkType {
            switch self {
            case .ethernet: .ethernet
            case .linuxSLL: .linuxSLL
            case .linuxSLL2: .linuxSLL2
            case .null: .null
            case .raw: .raw
            }
        }
    }

    public var link: Link

    public init(link: Link = .ethernet()) { self.link = link }

    /// A whole frame: link header, IPv4 or IPv6 header (by the endpoints' family), TCP header, payload.
    public func tcp(
        from source: Endpoint, to destination: Endpoint, sequence: UInt32, acknowledgment: UInt32 = 0,
        flags: TCPFlags, payload: [UInt8] = [], window: UInt16 = 65535, mss: UInt16? = nil, trailer: Int = 0
    ) -> [UInt8] {
        var tcp: [UInt8] = []
        tcp.appendBig(source.port)
        tcp.appendBig(destination.port)
        tcp.appendBig(sequence)
        tcp.appendBig(acknowledgment)
        let optionBytes: [UInt8] = mss.map { [2, 4, UInt8($0 >> 8), UInt8($0 & 0xFF)] } ?? []
        tcp.append(UInt8((20 + optionBytes.count) / 4) << 4)
        tcp.append(flags.rawValue)
        tcp.appendBig(window)
        tcp.appendBig(UInt16(0xBEEF))  // checksum: deliberately wrong, framescope must not care
        tcp.appendBig(UInt16(0))
        tcp += optionBytes
        tcp += payload
        let isIPv4 = source.address.isIPv4
        let ip = isIPv4 ? ipv4(source.address, destination.address, tcp.count) : ipv6(source.address, destination.address, tcp.count)
        return linkHeader(isIPv4: isIPv4) + ip + tcp + [UInt8](repeating: 0, count: trailer)
    }

    private func ipv4(_ source: IPAddress, _ destination: IPAddress, _ payloadLength: Int) -> [UInt8] {
        var h: [UInt8] = [0x45, 0]
        h.appendBig(UInt16(20 + payloadLength))
        h += [0, 1, 0x40, 0, 64, 6, 0, 0]
        h.appendBig(source.ipv4)
        h.appendBig(destination.ipv4)
        return h
    }

    private func ipv6(_ source: IPAddress, _ destination: IPAddress, _ payloadLength: Int) -> [UInt8] {
        var h: [UInt8] = [0x60, 0, 0, 0]
        h.appendBig(UInt16(payloadLength))
        h += [6, 64]
        h.appendBig(source.high)
        h.appendBig(source.low)
        h.appendBig(destination.high)
        h.appendBig(destination.low)
        return h
    }

    private func linkHeader(isIPv4: Bool) -> [UInt8] {
        let etherType: UInt16 = isIPv4 ? 0x0800 : 0x86DD
        switch link {
        case .ethernet(let tags):
            var h: [UInt8] = [2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]
            for (i, tag) in tags.enumerated() {
                h.appendBig(UInt16(i == 0 && tags.count > 1 ? 0x88A8 : 0x8100))
                h.appendBig(tag)
            }
            h.appendBig(etherType)
            return h
        case .linuxSLL:
            var h: [UInt8] = [0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]
            h.appendBig(etherType)
            return h
        case .linuxSLL2:
            var h: [UInt8] = []
            h.appendBig(etherType)
            h += [0, 0, 0, 0, 0, 1, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]
            return h
        case .null:
            let family: UInt32 = isIPv4 ? 2 : 24
            return [UInt8(family & 0xFF), 0, 0, 0]  // host (little-endian) order
        case .raw:
            return []
        }
    }
}

extension Array where Element == UInt8 {
    mutating func appendBig<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }
}

extension Endpoint {
    /// `"10.0.0.1:80"` or `"[::1]:80"`; nil if malformed. For tests and tools, not the hot path.
    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
            guard let address = IPAddress(ipv6: host) else { return nil }
            self.init(address: address, port: port)
        } else {
            let parts = host.split(separator: ".").compactMap { UInt8($0) }
            guard parts.count == 4 else { return nil }
            self.init(address: IPAddress(ipv4: parts.reduce(0) { $0 << 8 | UInt32($1) }), port: port)
        }
    }
}

extension IPAddress {
    /// Parses IPv6 text with at most one `::`.
    public init?(ipv6 text: String) {
        func groups(_ part: Substring) -> [UInt16]? {
            if part.isEmpty { return [] }
            let values = part.split(separator: ":", omittingEmptySubsequences: false).map { UInt16($0, radix: 16) }
            return values.contains(nil) ? nil : values.map { $0! }
        }
        let characters = Array(text)
        var split: Int?
        for i in 0..<max(0, characters.count - 1) where characters[i] == ":" && characters[i + 1] == ":" {
            if split != nil { return nil }
            split = i
        }
        var all: [UInt16]
        if let split {
            guard let head = groups(Substring(String(characters[..<split]))),
                let tail = groups(Substring(String(characters[(split + 2)...]))),
                head.count + tail.count < 8
            else { return nil }
            all = head + [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
        } else {
            guard let whole = groups(Substring(text)), whole.count == 8 else { return nil }
            all = whole
        }
        var high: UInt64 = 0, low: UInt64 = 0
        for (i, group) in all.enumerated() {
            if i < 4 { high = high << 16 | UInt64(group) } else { low = low << 16 | UInt64(group) }
        }
        self.init(high: high, low: low)
    }
}
