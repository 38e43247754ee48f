import FramescopeSynthetic
@testable import FramescopeCore
import Testing

@Suite struct PacketDecoderTests {
    let payload: [UInt8] = Array("hello".utf8)

    func decode(_ packet: [UInt8], _ linkType: LinkType) -> DecodedPacket {
        packet.withUnsafeBytes { PacketDecoder.decode($0, linkType: linkType) }
    }

    func expectTCP(_ packet: [UInt8], _ linkType: LinkType, from: Endpoint = client, payload expected: [UInt8]? = nil) {
        packet.withUnsafeBytes { bytes in
            guard case .tcp(let segment) = PacketDecoder.decode(bytes, linkType: linkType) else {
                Issue.record("not decoded as TCP over \(linkType)")
                return
            }
            #expect(segment.source == from)
            #expect(segment.sequence == 77)
            #expect(Array(segment.payload) == (expected ?? payload))
            #expect(segment.missingPayload == 0)
        }
    }

    @Test(arguments: [
        PacketBuilder.Link.ethernet(), .ethernet(vlanTags: [100]), .ethernet(vlanTags: [100, 200]),
        .linuxSLL, .linuxSLL2, .null, .raw,
    ])
    func decodesEveryLinkTypeOverIPv4AndIPv6(link: PacketBuilder.Link) {
        let builder = PacketBuilder(link: link)
        expectTCP(builder.tcp(from: client, to: server, sequence: 77, flags: [.ack, .psh], payload: payload), link.linkType)
        let v6a = Endpoint("[2001:db8::1]:5555")!, v6b = Endpoint("[2001:db8::2]:80")!
        expectTCP(builder.tcp(from: v6a, to: v6b, sequence: 77, flags: [.ack], payload: payload), link.linkType, from: v6a)
    }

    @Test func ignoresEthernetTrailerPadding() {
        let packet = PacketBuilder().tcp(from: client, to: server, sequence: 77, flags: [.ack], payload: [1], trailer: 5)
        expectTCP(packet, .ethernet, payload: [1])
    }

    @Test func skipsIPv4OptionsAndReadsMSS() {
        var packet = PacketBuilder(link: .raw).tcp(from: client, to: server, sequence: 77, flags: [.syn], mss: 1400)
        // Grow the IPv4 header by one 4-byte option (NOP × 4) and fix IHL and total length.
        packet.insert(contentsOf: [1, 1, 1, 1], at: 20)
        packet[0] = 0x46
        packet[3] += 4
        packet.withUnsafeBytes { bytes in
            guard case .tcp(let segment) = PacketDecoder.decode(bytes, linkType: .raw) else { Issue.record("not TCP"); return }
            #expect(segment.maximumSegmentSize == 1400)
            #expect(segment.flags == [.syn])
        }
    }

    @Test func skipsIPv6ExtensionHeaders() {
        let a = Endpoint("[fe80::1]:1000")!, b = Endpoint("[fe80::2]:2000")!
        var packet = PacketBuilder(link: .raw).tcp(from: a, to: b, sequence: 77, flags: [.ack], payload: payload)
        packet[6] = 0  // next header: hop-by-hop options
        packet.insert(contentsOf: [6, 0, 1, 4, 0, 0, 0, 0], at: 40)  // → TCP, 8 bytes, PadN
        packet[5] += 8
        expectTCP(packet, .raw, from: a)
    }

    @Test func countsWhatItCannotDecode() {
        var fragment = PacketBuilder(link: .raw).tcp(from: client, to: server, sequence: 1, flags: [.ack], payload: payload)
        fragment[6] = 0x20  // more fragments
        #expect(decode(fragment, .raw).skipReason == .ipFragment)
        var udp = PacketBuilder(link: .raw).tcp(from: client, to: server, sequence: 1, flags: [.ack])
        udp[9] = 17
        #expect(decode(udp, .raw).skipReason == .notTCP)
        #expect(decode([1, 2, 3], .ethernet).skipReason == .truncatedLinkHeader)
        #expect(decode([UInt8](repeating: 0, count: 40), LinkType(rawValue: 147)).skipReason == .unsupportedLinkType)
        var arp = PacketBuilder().tcp(from: client, to: server, sequence: 1, flags: [.ack])
        arp[12] = 0x08; arp[13] = 0x06
        #expect(decode(arp, .ethernet).skipReason == .notIP)
        let cut = Array(PacketBuilder(link: .raw).tcp(from: client, to: server, sequence: 1, flags: [.ack]).prefix(30))
        #expect(decode(cut, .raw).skipReason == .truncatedTCPHeader)
    }

    @Test func reportsSnaplenTruncatedPayloadAsMissing() {
        let packet = PacketBuilder(link: .raw).tcp(from: client, to: server, sequence: 77, flags: [.ack], payload: payload)
        Array(packet.dropLast(3)).withUnsafeBytes { bytes in
            guard case .tcp(let segment) = PacketDecoder.decode(bytes, linkType: .raw) else { Issue.record("not TCP"); return }
            #expect(segment.payload.count == 2)
            #expect(segment.missingPayload == 3)
        }
    }

    @Test func decodesCiscoHDLCInsidePPP() {
        let ip = PacketBuilder(link: .raw).tcp(from: client, to: server, sequence: 77, flags: [.ack], payload: payload)
        expectTCP([0x0F, 0x00, 0x08, 0x00] + ip, .ppp)
        expectTCP([0xFF, 0x03, 0x00, 0x21] + ip, .ppp)
    }

    @Test func formatsAddressesLikeTshark() {
        #expect(Endpoint("[2001:db8:0:0:1:0:0:1]:443")!.description == "[2001:db8::1:0:0:1]:443")
        #expect(Endpoint("[::1]:80")!.description == "[::1]:80")
        #expect(Endpoint("[fe80::]:80")!.description == "[fe80::]:80")
        #expect(Endpoint("192.168.0.1:8080")!.description == "192.168.0.1:8080")
    }
}

extension DecodedPacket {
    var skipReason: SkipReason? {
        if case .skipped(let reason) = self { return reason }
        return nil
    }
}
