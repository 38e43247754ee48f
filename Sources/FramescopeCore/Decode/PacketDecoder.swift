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

    /// Decodes a packet read from a capture, noting where its payload lies in the file when the
    /// capture layer knows where the packet does (`info.location`).
    @inline(__always)
    public static func decode(_ bytes: UnsafeRawBufferPointer, info: CaptureInfo) -> DecodedPacket {
        let packet = decode(bytes, linkType: info.linkType)
        guard info.location.isKnown, case .tcp(var segment) = packet, let start = bytes.baseAddress, let payload = segment.payload.baseAddress else {
            return packet
        }
        segment.payloadLocation = info.location.advanced(by: payload - start)
        return .tcp(segment)
    }
}
