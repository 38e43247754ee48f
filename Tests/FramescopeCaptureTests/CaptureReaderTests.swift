import FramescopeSynthetic
import FramescopeCapture
@testable import FramescopeCore
import Foundation
import Testing

@Suite struct CaptureReaderTests {
    let client = Endpoint("192.168.1.10:50000")!
    let server = Endpoint("192.168.1.20:9000")!

    /// A small conversation: handshake, `messages` client segments of 100 bytes, FIN both ways.
    func conversation(_ builder: PacketBuilder = PacketBuilder(), messages: Int = 5, from client: Endpoint? = nil) -> [[UInt8]] {
        let client = client ?? self.client
        var packets = [
            builder.tcp(from: client, to: server, sequence: 100, flags: [.syn], mss: 1460),
            builder.tcp(from: server, to: client, sequence: 900, flags: [.syn, .ack], mss: 1460),
        ]
        for i in 0..<messages {
            packets.append(builder.tcp(from: client, to: server, sequence: 101 + UInt32(i * 100), flags: [.ack, .psh], payload: [UInt8](repeating: UInt8(i), count: 100)))
        }
        packets.append(builder.tcp(from: client, to: server, sequence: 101 + UInt32(messages * 100), flags: [.fin, .ack]))
        packets.append(builder.tcp(from: server, to: client, sequence: 901, flags: [.fin, .ack]))
        return packets
    }

    func pcap(_ packets: [[UInt8]], linkType: LinkType = .ethernet, bigEndian: Bool = false, nanosecond: Bool = false, start: Int64 = 1_700_000_000) -> [UInt8] {
        var writer = CaptureFileWriter(linkType: linkType, bigEndian: bigEndian, nanosecond: nanosecond)
        for (i, packet) in packets.enumerated() {
            writer.add(packet, at: Timestamp(seconds: start + Int64(i), nanoseconds: 123_456_789))
        }
        return writer.bytes
    }

    @Test(arguments: [(false, false), (true, false), (false, true), (true, true)])
    func readsPcapInEitherByteOrderAndPrecision(bigEndian: Bool, nanosecond: Bool) throws {
        let path = temporaryFile(pcap(conversation(), bigEndian: bigEndian, nanosecond: nanosecond))
        let (table, reader) = try analyze([path], sink: FlowsRecorder())
        #expect(reader.errors.isEmpty)
        let summary = try #require(table.sink.closed.first)
        #expect(summary[.clientToServer].bytes == 500)
        #expect(summary.end == .fin)
        // Microsecond files lose the last three digits; nanosecond files keep them.
        #expect(summary.info.firstSeen.nanoseconds % 1_000_000_000 == (nanosecond ? 123_456_789 : 123_456_000))
    }

    @Test func readsSeveralFilesInOrderNumberingFramesAcrossThem() throws {
        let packets = conversation()
        let first = temporaryFile(pcap(Array(packets.prefix(4))))
        let second = temporaryFile(pcap(Array(packets.dropFirst(4)), linkType: .ethernet, start: 1_700_000_004))
        let (table, reader) = try analyze([first, second], sink: FlowsRecorder())
        #expect(reader.files.map(\.packets) == [4, packets.count - 4])
        #expect(reader.files.map(\.firstFrame) == [1, 5])
        #expect(table.sink.closed.count == 1)
        #expect(table.sink.closed[0][.clientToServer].bytes == 500)
    }

    @Test func appliesABPFFilterButCountsEveryFrame() throws {
        let other = Endpoint("192.168.1.30:50001")!
        var packets = conversation()
        packets.insert(PacketBuilder().tcp(from: other, to: Endpoint("192.168.1.40:80")!, sequence: 1, flags: [.syn]), at: 0)
        let path = temporaryFile(pcap(packets))
        let (table, _) = try analyze([path], sink: FlowsRecorder(), filter: "tcp port 9000")
        #expect(table.sink.closed.count == 1)
        #expect(table.sink.closed[0].info.firstFrame == 2)  // frame 1 was filtered out, still counted
        #expect(table.decodeStatistics.packets == packets.count - 1)
    }

    @Test func aBadFilterIsRejectedWithLibpcapsMessage() {
        #expect(throws: CaptureError.self) { try PacketFilter(expression: "tcp port") }
        do {
            _ = try PacketFilter(expression: "hosst 1.2.3.4")
        } catch {
            #expect(error.description.contains("hosst 1.2.3.4"))
        }
    }

    @Test func aTruncatedFileReportsWhereItBrokeAndKeepsWhatWasRead() throws {
        var bytes = pcap(conversation())
        bytes.removeLast(40)  // cut inside the last record
        let path = temporaryFile(bytes)
        let (table, reader) = try analyze([path], sink: FlowsRecorder())
        let error = try #require(reader.errors.first)
        guard case .broken(let broken, _, let packets, let lastFrame, _) = error else {
            Issue.record("expected a broken-capture error, got \(error)")
            return
        }
        #expect(broken == path)
        #expect(packets == conversation().count - 1)
        #expect(lastFrame == UInt64(packets))
        #expect(error.description.contains(path) && error.description.contains("broken after"))
        #expect(table.sink.closed.first?[.clientToServer].bytes == 500)
    }

    @Test func aFileThatIsNotACaptureSaysSo() throws {
        let path = temporaryFile(Array("this is not a capture file, just text\n".utf8), suffix: ".txt")
        let (_, reader) = try analyze([path], sink: FlowsRecorder())
        let error = try #require(reader.errors.first)
        #expect(error.description.contains(path))
        #expect(error.description.contains("not a pcap or pcapng capture"))
        let missing = "/nonexistent/framescope.pcap"
        let (_, reader2) = try analyze([missing], sink: FlowsRecorder())
        #expect(reader2.errors.first?.description.contains("No such file") == true)
    }

    @Test func pcapngWithInterfacesOfDifferentLinkTypesIsReadWhole() throws {
        // libpcap 1.10 refuses the second interface; the pcapng reader takes over after it.
        let ethernet = conversation(PacketBuilder(), messages: 2)
        let sll = conversation(PacketBuilder(link: .linuxSLL), messages: 3, from: Endpoint("192.168.1.11:50000")!)
        var writer = PcapngWriter()
        writer.addInterface(linkType: .ethernet, resolutionDigits: 6)
        for (i, p) in ethernet.prefix(3).enumerated() { writer.addPacket(p, interface: 0, units: UInt64(i)) }
        writer.addInterface(linkType: .linuxSLL, resolutionDigits: 9)
        for (i, p) in sll.enumerated() { writer.addPacket(p, interface: 1, units: 5_000_000_000 + UInt64(i)) }
        for p in ethernet.dropFirst(3) { writer.addPacket(p, interface: 0, units: 10_000_000) }
        let path = temporaryFile(writer.bytes, suffix: ".pcapng")
        let (table, reader) = try analyze([path], sink: FlowsRecorder())
        #expect(reader.errors.isEmpty, "\(reader.errors)")
        #expect(reader.files.first?.reader == "libpcap+pcapng-fallback")
        #expect(reader.files.first?.packets == ethernet.count + sll.count)
        #expect(table.decodeStatistics.tcpSegments == ethernet.count + sll.count)
        #expect(table.sink.closed.map { $0[.clientToServer].bytes }.sorted() == [200, 300])
    }
}

/// Keeps summaries only.
struct FlowsRecorder: StatelessStreamSink {
    var closed: [ConnectionSummary] = []
    mutating func connectionClosed(_ summary: ConnectionSummary) { closed.append(summary) }
}

/// A minimal little-endian pcapng writer for tests: SHB, IDBs with if_tsresol, EPBs.
struct PcapngWriter {
    var bytes: [UInt8] = []

    init() {
        block(type: 0x0A0D_0D0A, body: le32(0x1A2B_3C4D) + [1, 0, 0, 0] + [UInt8](repeating: 0xFF, count: 8))
    }

    mutating func addInterface(linkType: LinkType, resolutionDigits: UInt8) {
        let options: [UInt8] = [9, 0, 1, 0, resolutionDigits, 0, 0, 0] + [0, 0, 0, 0]
        block(type: 1, body: [UInt8(linkType.rawValue & 0xFF), UInt8(linkType.rawValue >> 8), 0, 0] + le32(65535) + options)
    }

    mutating func addPacket(_ packet: [UInt8], interface: UInt32, units: UInt64) {
        var body = le32(interface) + le32(UInt32(units >> 32)) + le32(UInt32(units & 0xFFFF_FFFF))
        body += le32(UInt32(packet.count)) + le32(UInt32(packet.count)) + packet
        while body.count % 4 != 0 { body.append(0) }
        block(type: 6, body: body)
    }

    private mutating func block(type: UInt32, body: [UInt8]) {
        let length = UInt32(12 + body.count)
        bytes += le32(type) + le32(length) + body + le32(length)
    }

    private func le32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
}
