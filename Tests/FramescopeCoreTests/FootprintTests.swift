import FramescopeSynthetic
import Testing

@testable import FramescopeCore

/// The fixed state of a tracked connection, before any buffer or histogram grows: the flow
/// table's record and activity entry, and the framing object of a dissected connection (two
/// direction analyzers). Ceilings at today's sizes, so that a field added to the per-connection
/// path is a decision, not an accident: 50,000 open connections multiply every byte.
@Suite struct FootprintTests {
    @Test func aConnectionsFixedStateStaysWithinItsBudget() {
        #expect(MemoryLayout<Connection<Analyzer.ConnectionState>>.stride <= 416)
        // Both directions' reassembly (no dead field, small fields packed — the statistics' four
        // flags in a byte, the half-stream's two in another and its sequence base in the
        // statistics' tail padding — the conflict window one reference, the duplicate-ACK, zero-
        // window and window-full counters out of line, the out-of-order buffer and skipped holes
        // one reference, the bytes delivered counted once) and the TCP analysis (a list's order flag
        // in its tail's top bit; one segment in flight kept in place, 8 bytes a list, instead of
        // storage of 64 bytes with malloc's; the record's own small fields in its tail padding).
        #expect(MemoryLayout<HalfStream>.stride <= 104)
        #expect(MemoryLayout<TCPAnalysis>.size <= 121)
        #expect(MemoryLayout<ConnectionActivity>.stride <= 16)
        // The counts of 0–3 segments per message and messages per segment in place (16 bytes
        // each: two arrays of 80 bytes with malloc's fewer a direction); the tallies by type
        // and by protobuf field out of line (24 bytes fewer).
        // The segment a message began in read from the ledger's list (32 bytes fewer), the one-byte
        // fields in the ledger's tail padding: with its object header and malloc's word, 544 bytes
        // an analyzer (592 before).
        #expect(MemoryLayout<DirectionAnalyzer>.size <= 520)
        #expect(MemoryLayout<CountHistogram>.stride <= 40)
        // The schema is shared by reference, not copied into every direction.
        #expect(MemoryLayout<BodyInspection>.stride <= 64)
    }

    /// A dissected connection that never carries a byte (a port scan, a health check) holds the
    /// plan's reference, not a framing object, and reports what untouched analyzers would; the
    /// first byte starts its framing, and a direction's analyzer comes with its own first byte.
    @Test func aConnectionWithoutPayloadAllocatesNoFraming() {
        var table = FlowTable(sink: Analyzer(choice: DissectorChoice(byDefault: try! DissectorSpec(parsing: "varint"))))
        var frame: UInt64 = 0
        func send(_ from: Endpoint, _ to: Endpoint, seq: UInt32, _ flags: TCPFlags, _ payload: [UInt8] = []) {
            frame += 1
            let packet = PacketBuilder().tcp(from: from, to: to, sequence: seq, flags: flags, payload: payload)
            packet.withUnsafeBytes {
                table.process($0, info: CaptureInfo(frame: frame, timestamp: Timestamp(seconds: Int64(frame), nanoseconds: 0), linkType: .ethernet, captureLength: packet.count, originalLength: packet.count))
            }
        }
        func states() -> [String] {
            var all: [String] = []
            table.forEachOpenConnection { _, state in
                switch state {
                case .undissected: all.append("undissected")
                case .waiting: all.append("waiting")
                case .framing: all.append("framing")
                }
            }
            return all
        }
        func usedDirections() -> [[Direction]] {
            var all: [[Direction]] = []
            table.forEachOpenConnection { _, state in
                if case .framing(let framing) = state { all.append(Direction.allCases.filter { framing.existing($0) != nil }) }
            }
            return all
        }
        send(client, server, seq: 100, [.syn])
        send(server, client, seq: 900, [.syn, .ack])
        send(client, server, seq: 101, [.ack])
        #expect(states() == ["waiting"])
        send(client, server, seq: 101, [.ack, .psh], [3, 1, 2, 3])
        #expect(states() == ["framing"])
        // Only the direction that carried a byte has an analyzer; the other's comes with its first.
        #expect(usedDirections() == [[.clientToServer]])
        send(server, client, seq: 901, [.ack, .psh], [1, 9])
        #expect(usedDirections() == [[.clientToServer, .serverToClient]])
        table.finish()
        // A second one that closes without a byte: dissected, with figures of nothing.
        send(client, server, seq: 100, [.syn])
        send(server, client, seq: 900, [.syn, .ack])
        send(client, server, seq: 101, [.fin, .ack])
        send(server, client, seq: 901, [.fin, .ack])
        table.finish()
        let quiet = table.sink.connections.last!
        #expect(quiet.spec != nil && table.sink.finished.dissected == 2)
        #expect(quiet.directions?.clientToServer == DirectionAnalysis() && quiet.directions?.serverToClient == DirectionAnalysis())
        // A third whose server never writes: its client's message counted, the server's side
        // reported as an untouched analyzer's.
        send(client, server, seq: 100, [.syn])
        send(server, client, seq: 900, [.syn, .ack])
        send(client, server, seq: 101, [.ack, .psh], [2, 7, 7])
        #expect(usedDirections() == [[.clientToServer]])
        send(client, server, seq: 104, [.fin, .ack])
        send(server, client, seq: 901, [.fin, .ack])
        table.finish()
        let oneWay = table.sink.connections.last!
        #expect(oneWay.directions?.clientToServer.messages == 1)
        #expect(oneWay.directions?.serverToClient == DirectionAnalysis())
    }
}
