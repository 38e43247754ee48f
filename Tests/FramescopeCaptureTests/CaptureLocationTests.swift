import Foundation
import FramescopeCapture
import FramescopeSynthetic
import Testing

@testable import FramescopeCore

/// A classic pcap file read by path: each packet's place in the file is known, and retransmitted
/// copies are compared with the first copy read back from there. The results are those of
/// comparing with copies kept in memory.
@Suite struct CaptureLocationTests {
    struct ConflictRecorder: StatelessStreamSink {
        var conflicts: [StreamConflict] = []
        var closed: [PerDirection<DirectionStatistics>] = []
        mutating func conflict(_ conflict: StreamConflict) { conflicts.append(conflict) }
        mutating func connectionClosed(_ summary: ConnectionSummary) { closed.append(summary.directions) }
    }

    /// Connections whose segments (1 to 1,400 bytes) come with retransmitted copies, a third of
    /// them altered, and now and then out of order.
    static func capture(snapLength: UInt32, bigEndian: Bool, nanosecond: Bool, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        var writer = CaptureFileWriter(linkType: .ethernet, bigEndian: bigEndian, nanosecond: nanosecond, snapLength: snapLength)
        let builder = PacketBuilder()
        var time: Int64 = 1_700_000_000_000_000_000
        func add(_ packet: [UInt8]) {
            time += 1_000
            writer.add(packet, at: Timestamp(nanoseconds: time))
        }
        let server = Endpoint("10.0.0.2:7000")!
        for c in 0..<20 {
            let client = Endpoint("10.0.0.1:\(40_000 + c)")!
            add(builder.tcp(from: client, to: server, sequence: 999, flags: [.syn], mss: 1460))
            let stream = (0..<20_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let largest = [16, 200, 1400][c % 3]
            var sent = 0, held: [UInt8]? = nil
            while sent < stream.count {
                let count = min(stream.count - sent, Int.random(in: 1...largest, using: &generator))
                let packet = builder.tcp(from: client, to: server, sequence: UInt32(1000 + sent), flags: [.ack], payload: Array(stream[sent..<sent + count]))
                if held == nil && Int.random(in: 0..<12, using: &generator) == 0 {
                    held = packet  // sent after the next one
                } else {
                    add(packet)
                    if let late = held { add(late) }
                    held = nil
                }
                if Int.random(in: 0..<4, using: &generator) == 0 {
                    let start = Int.random(in: max(0, sent - 400)...sent, using: &generator)
                    var copy = Array(stream[start..<min(stream.count, start + Int.random(in: 1...500, using: &generator))])
                    if Int.random(in: 0..<3, using: &generator) == 0 { copy[Int.random(in: 0..<copy.count, using: &generator)] ^= 0xA5 }
                    add(builder.tcp(from: client, to: server, sequence: UInt32(1000 + start), flags: [.ack], payload: copy))
                }
                sent += count
            }
            if let late = held { add(late) }
            add(builder.tcp(from: client, to: server, sequence: UInt32(1000 + stream.count), flags: [.fin, .ack]))
        }
        return writer.bytes
    }

    static func read(_ path: String, locating: Bool) -> (ConflictRecorder, CaptureReader) {
        var reader = CaptureReader(paths: [path])
        if locating { reader.captureFiles = CaptureFiles(inputs: 1) }
        var table = FlowTable(sink: ConflictRecorder(), captureFiles: reader.captureFiles)
        reader.read { info, bytes in table.process(bytes, info: info) }
        table.finish()
        return (table.sink, reader)
    }

    // A snapshot length of 600 cuts the longer records: libpcap reports them as 600 bytes and
    // skips the rest, which only the file position tells.
    @Test(arguments: [(262_144, false, false), (600, false, true), (600, true, false), (1514, true, true)])
    func comparesWithTheFileAsWithCopies(snapLength: Int, bigEndian: Bool, nanosecond: Bool) throws {
        let path = temporaryFile(Self.capture(snapLength: UInt32(snapLength), bigEndian: bigEndian, nanosecond: nanosecond, seed: UInt64(snapLength)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (located, reader) = Self.read(path, locating: true)
        let (copied, _) = Self.read(path, locating: false)
        #expect(reader.errors.isEmpty)
        #expect(reader.captureFiles?.holds(input: 0) == true)
        #expect(located.conflicts.count > 100)
        #expect(located.conflicts == copied.conflicts)
        #expect(located.closed == copied.closed)
    }

    @Test func pcapngIsNotLocated() throws {
        var writer = PcapngWriter()
        writer.addInterface(linkType: .ethernet, resolutionDigits: 6)
        let client = Endpoint("10.0.0.1:40000")!, server = Endpoint("10.0.0.2:7000")!
        writer.addPacket(PacketBuilder().tcp(from: client, to: server, sequence: 1, flags: [.ack], payload: [1, 2, 3]), interface: 0, units: 1)
        let path = temporaryFile(writer.bytes, suffix: ".pcapng")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (_, reader) = Self.read(path, locating: true)
        #expect(reader.errors.isEmpty && reader.files.first?.packets == 1)
        #expect(reader.captureFiles?.holds(input: 0) == false)
    }
}
