/// The outcome of decoding one packet.
public enum DecodedPacket {
    case tcp(TCPSegment)
    case skipped(SkipReason)
}

/// Decodes link layer → IP → TCP in place, over borrowed bytes, with no allocation.
public enum PacketDecoder {
    public static func decode(_ bytes: UnsafeRawBufferPointer, linkType: LinkType) -> DecodedPacket {
        switch LinkLayer.network(of: bytes, linkType: linkType) {
        case .ipv4(let ip): IPLayer.decodeIPv4(ip)
        case .ipv6(let ip): IPLayer.decodeIPv6(ip)
        case .skipped(let reason): .skipped(reason)
        }
    }
}
