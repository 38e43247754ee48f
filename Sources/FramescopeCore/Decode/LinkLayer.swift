/// The network-layer bytes a link header wraps.
enum NetworkPayload {
    case ipv4(UnsafeRawBufferPointer)
    case ipv6(UnsafeRawBufferPointer)
    case skipped(SkipReason)
}

/// Link-layer headers: Ethernet (802.1Q/802.1ad tags, PPPoE, MPLS), Linux SLL/SLL2,
/// BSD NULL/LOOP, raw IP, PPP and Cisco HDLC.
enum LinkLayer {
    static func network(of b: UnsafeRawBufferPointer, linkType: LinkType) -> NetworkPayload {
        switch linkType {
        case .ethernet:
            return ethernet(b)
        case .ethernetMPacket:
            // 802.3br mPacket: 7 preamble bytes and an SMD byte before the Ethernet frame.
            guard b.count >= 8 else { return .skipped(.truncatedLinkHeader) }
            return ethernet(b.dropFirst(8))
        case .linuxSLL:
            guard b.count >= 16 else { return .skipped(.truncatedLinkHeader) }
            return etherType(b.u16be(14), b.dropFirst(16))
        case .linuxSLL2:
            guard b.count >= 20 else { return .skipped(.truncatedLinkHeader) }
            return etherType(b.u16be(0), b.dropFirst(20))
        case .null, .loop:
            guard b.count >= 4 else { return .skipped(.truncatedLinkHeader) }
            // NULL stores the family in the capturing host's byte order, LOOP in network order:
            // accept either, as tcpdump does.
            let raw = b.u32be(0)
            return addressFamily(raw > 0xFFFF ? raw.byteSwapped : raw, b.dropFirst(4))
        case .raw, .rawBSD, .rawOpenBSD, .ipv4, .ipv6:
            return byVersionNibble(b)
        case .ppp, .pppHDLC, .ciscoHDLC:
            return ppp(b)
        default:
            return .skipped(.unsupportedLinkType)
        }
    }

    private static func ethernet(_ b: UnsafeRawBufferPointer) -> NetworkPayload {
        guard b.count >= 14 else { return .skipped(.truncatedLinkHeader) }
        var offset = 12
        var type = b.u16be(offset)
        // 802.1Q, 802.1ad (QinQ) and the older 0x9100/0x9200 stacking tags.
        while type == 0x8100 || type == 0x88A8 || type == 0x9100 || type == 0x9200 {
            offset += 4
            guard b.count >= offset + 2 else { return .skipped(.truncatedLinkHeader) }
            type = b.u16be(offset)
        }
        return etherType(type, b.dropFirst(offset + 2))
    }

    private static func etherType(_ type: UInt16, _ b: UnsafeRawBufferPointer) -> NetworkPayload {
        switch type {
        case 0x0800: return .ipv4(b)
        case 0x86DD: return .ipv6(b)
        case 0x8864:
            // PPPoE session: 6-byte header, then a PPP protocol number.
            guard b.count >= 8 else { return .skipped(.truncatedLinkHeader) }
            return pppProtocol(b.u16be(6), b.dropFirst(8))
        case 0x8847, 0x8848:
            // MPLS: skip labels to the bottom of the stack, then look at the IP version.
            var offset = 0
            while true {
                guard b.count >= offset + 4 else { return .skipped(.truncatedLinkHeader) }
                let bottom = b.u8(offset + 2) & 0x01 != 0
                offset += 4
                if bottom { return byVersionNibble(b.dropFirst(offset)) }
            }
        default:
            return .skipped(.notIP)
        }
    }

    private static func addressFamily(_ family: UInt32, _ b: UnsafeRawBufferPointer) -> NetworkPayload {
        switch family {
        case 2: .ipv4(b)
        case 10, 24, 28, 30: .ipv6(b)  // Linux, NetBSD/OpenBSD, FreeBSD, macOS values of AF_INET6
        default: .skipped(.notIP)
        }
    }

    private static func byVersionNibble(_ b: UnsafeRawBufferPointer) -> NetworkPayload {
        guard b.count >= 1 else { return .skipped(.truncatedIPHeader) }
        switch b.u8(0) >> 4 {
        case 4: return .ipv4(b)
        case 6: return .ipv6(b)
        default: return .skipped(.notIP)
        }
    }

    /// PPP with or without the HDLC address/control bytes, and Cisco HDLC (which some
    /// captures label as PPP).
    private static func ppp(_ b: UnsafeRawBufferPointer) -> NetworkPayload {
        guard b.count >= 4 else { return .skipped(.truncatedLinkHeader) }
        let first = b.u8(0)
        if (first == 0x0F || first == 0x8F) && b.u8(1) == 0x00 {
            return etherType(b.u16be(2), b.dropFirst(4))
        }
        if first == 0xFF && b.u8(1) == 0x03 {
            return pppProtocol(b.u16be(2), b.dropFirst(4))
        }
        return pppProtocol(b.u16be(0), b.dropFirst(2))
    }

    private static func pppProtocol(_ proto: UInt16, _ b: UnsafeRawBufferPointer) -> NetworkPayload {
        switch proto {
        case 0x0021: .ipv4(b)
        case 0x0057: .ipv6(b)
        default: .skipped(.notIP)
        }
    }
}
