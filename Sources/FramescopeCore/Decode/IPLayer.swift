/// IPv4 (with options) and IPv6 (extension headers skipped), then TCP.
enum IPLayer {
    static func decodeIPv4(_ b: UnsafeRawBufferPointer) -> DecodedPacket {
        guard b.count >= 20 else { return .skipped(.truncatedIPHeader) }
        let versionIHL = b.u8(0)
        let headerLength = Int(versionIHL & 0x0F) * 4
        guard versionIHL >> 4 == 4, headerLength >= 20 else { return .skipped(.badIPHeader) }
        guard b.count >= headerLength else { return .skipped(.truncatedIPHeader) }
        var totalLength = Int(b.u16be(2))
        // A total length of 0 comes from TCP segmentation offload on the capturing host.
        if totalLength == 0 { totalLength = b.count }
        guard totalLength >= headerLength else { return .skipped(.badIPHeader) }
        let fragment = b.u16be(6)
        if fragment & 0x3FFF != 0 { return .skipped(.ipFragment) }  // MF set or offset ≠ 0
        guard b.u8(9) == 6 else { return .skipped(.notTCP) }
        let source = IPAddress(ipv4: b.u32be(12))
        let destination = IPAddress(ipv4: b.u32be(16))
        // Trailer padding after `totalLength` is ignored; bytes the snaplen cut are "missing".
        let captured = min(b.count, totalLength)
        return TCPLayer.decode(
            b.slice(from: headerLength, count: captured - headerLength),
            claimedLength: totalLength - headerLength, source: source, destination: destination)
    }

    static func decodeIPv6(_ b: UnsafeRawBufferPointer) -> DecodedPacket {
        guard b.count >= 40 else { return .skipped(.truncatedIPHeader) }
        guard b.u8(0) >> 4 == 6 else { return .skipped(.badIPHeader) }
        let payloadLength = Int(b.u16be(4))
        let source = IPAddress(high: b.u64be(8), low: b.u64be(16))
        let destination = IPAddress(high: b.u64be(24), low: b.u64be(32))
        // Payload length 0 means a jumbogram: trust the captured length.
        var end = payloadLength == 0 ? b.count : 40 + payloadLength
        var next = b.u8(6)
        var offset = 40
        while next != 6 {
            guard b.count >= offset + 8 else { return .skipped(.truncatedIPHeader) }
            switch next {
            case 0, 43, 60, 135, 139, 140:  // hop-by-hop, routing, destination, mobility, HIP, shim6
                next = b.u8(offset)
                offset += (Int(b.u8(offset + 1)) + 1) * 8
            case 44:  // fragment: only an atomic fragment (offset 0, no M flag) is whole
                if b.u16be(offset + 2) & 0xFFF9 != 0 { return .skipped(.ipFragment) }
                next = b.u8(offset)
                offset += 8
            case 51:  // authentication header
                next = b.u8(offset)
                offset += (Int(b.u8(offset + 1)) + 2) * 4
            default:
                return .skipped(.notTCP)
            }
            if offset > end { return .skipped(.badIPHeader) }
        }
        guard b.count >= offset else { return .skipped(.truncatedIPHeader) }
        end = max(end, offset)
        let captured = min(b.count, end)
        return TCPLayer.decode(
            b.slice(from: offset, count: captured - offset),
            claimedLength: end - offset, source: source, destination: destination)
    }
}

enum TCPLayer {
    /// `b` holds the captured part of the IP payload; `claimedLength` is what the IP header says.
    static func decode(
        _ b: UnsafeRawBufferPointer, claimedLength: Int, source: IPAddress, destination: IPAddress
    ) -> DecodedPacket {
        guard b.count >= 20 else { return .skipped(.truncatedTCPHeader) }
        let headerLength = Int(b.u8(12) >> 4) * 4
        guard headerLength >= 20, headerLength <= claimedLength else { return .skipped(.badTCPHeader) }
        guard b.count >= headerLength else { return .skipped(.truncatedTCPHeader) }
        let flags = TCPFlags(rawValue: b.u8(13) & 0x1F)
        var options = (mss: UInt16(0), windowScale: Int8(-1))
        if flags.contains(.syn) { options = synOptions(b.slice(from: 20, count: headerLength - 20)) }
        let payload = b.dropFirst(headerLength)
        return .tcp(
            TCPSegment(
                source: Endpoint(address: source, port: b.u16be(0)),
                destination: Endpoint(address: destination, port: b.u16be(2)),
                sequence: b.u32be(4), acknowledgment: b.u32be(8), flags: flags, window: b.u16be(14),
                maximumSegmentSize: options.mss, windowScale: options.windowScale, payload: payload,
                missingPayload: claimedLength - headerLength - payload.count))
    }

    /// The MSS (0: none) and window scale (-1: none) options of a SYN.
    private static func synOptions(_ o: UnsafeRawBufferPointer) -> (mss: UInt16, windowScale: Int8) {
        var found = (mss: UInt16(0), windowScale: Int8(-1))
        var i = 0
        while i < o.count {
            let kind = o.u8(i)
            if kind == 0 { break }
            if kind == 1 { i += 1; continue }
            guard i + 1 < o.count else { break }
            let length = Int(o.u8(i + 1))
            guard length >= 2, i + length <= o.count else { break }
            if kind == 2 && length == 4 { found.mss = o.u16be(i + 2) }
            if kind == 3 && length == 3 { found.windowScale = Int8(min(o.u8(i + 2), 14)) }  // RFC 7323: at most 14
            i += length
        }
        return found
    }
}
