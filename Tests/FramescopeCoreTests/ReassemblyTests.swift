@testable import FramescopeCore
import FramescopeSynthetic
import Testing

@Suite struct ReassemblyTests {
    /// Client data cut into segments of these sizes, starting after the handshake.
    func segments(_ sizes: [Int], isn: UInt32 = 1000) -> [(seq: UInt32, bytes: [UInt8])] {
        var offset = 0
        return sizes.map { size in
            defer { offset += size }
            return (isn &+ 1 &+ UInt32(offset), pattern(offset, size))
        }
    }

    @Test func deliversInOrderSegmentsWithProvenance() {
        var c = Conversation()
        c.handshake()
        for s in segments([10, 20, 30]) { c.send(client, server, seq: s.seq, [.ack, .psh], s.bytes) }
        let sink = c.finish()
        #expect(sink.stream(0) == pattern(0, 60))
        #expect(sink.frames[ConnectionID(0)]![0] == [4, 5, 6])
        let stats = sink.summary(0)[.clientToServer]
        #expect(stats.segments == 3 && stats.outOfOrder == 0 && stats.retransmissions == 0 && stats.gaps == 0)
        #expect(!stats.startedMidStream && stats.synSeen)
    }

    @Test func everyPermutationGivesTheSameStream() {
        let all = segments([7, 1, 13, 5, 9])
        for order in permutations(Array(all.indices)) {
            var c = Conversation()
            c.handshake()
            for i in order { c.send(client, server, seq: all[i].seq, [.ack], all[i].bytes) }
            let sink = c.finish()
            #expect(sink.stream(0) == pattern(0, 35), "order \(order)")
            #expect(sink.gaps.isEmpty && sink.conflicts.isEmpty)
            #expect(sink.summary(0)[.clientToServer].segments == 5)
        }
    }

    @Test func duplicatesAreRetransmissionsNotData() {
        let all = segments([10, 10, 10])
        for order in permutations([0, 1, 2, 0, 1, 2]) {
            var c = Conversation()
            c.handshake()
            for i in order { c.send(client, server, seq: all[i].seq, [.ack], all[i].bytes) }
            let sink = c.finish()
            #expect(sink.stream(0) == pattern(0, 30))
            #expect(sink.summary(0)[.clientToServer].retransmissions == 3)
            #expect(sink.conflicts.isEmpty)
        }
    }

    @Test func overlappingCopiesWithDifferentBytesKeepTheFirstAndCountAConflict() {
        var c = Conversation()
        c.handshake()
        c.send(client, server, seq: 1001, [.ack], pattern(0, 10))
        c.send(client, server, seq: 1006, [.ack], [UInt8](repeating: 0xEE, count: 10))  // 5 old (differ) + 5 new
        let sink = c.finish()
        #expect(sink.stream(0) == pattern(0, 10) + [UInt8](repeating: 0xEE, count: 5))
        #expect(sink.conflicts == [StreamConflict(connection: ConnectionID(0), direction: .clientToServer, offset: 5, length: 5, frame: 5)])
    }

    @Test func conflictBetweenTwoBufferedCopies() {
        var c = Conversation()
        c.handshake()
        c.send(client, server, seq: 1011, [.ack], pattern(10, 10))
        c.send(client, server, seq: 1011, [.ack], [UInt8](repeating: 0, count: 10))
        c.send(client, server, seq: 1001, [.ack], pattern(0, 10))
        let sink = c.finish()
        #expect(sink.stream(0) == pattern(0, 20))
        #expect(sink.conflicts.map(\.offset) == [10])
    }

    @Test func sequenceNumbersWrapAround() {
        let isn = UInt32.max - 15
        let all = segments([10, 10, 10], isn: isn)
        for order in permutations([0, 1, 2]) {
            var c = Conversation()
            c.handshake(clientISN: isn)
            for i in order { c.send(client, server, seq: all[i].seq, [.ack], all[i].bytes) }
            let sink = c.finish()
            #expect(sink.stream(0) == pattern(0, 30))
            #expect(sink.gaps.isEmpty)
        }
    }

    @Test func aMissingSegmentBecomesAGapAtTheEnd() {
        let all = segments([10, 10, 10])
        var c = Conversation()
        c.handshake()
        c.send(client, server, seq: all[0].seq, [.ack], all[0].bytes)
        c.send(client, server, seq: all[2].seq, [.ack], all[2].bytes)
        let sink = c.finish()
        #expect(sink.stream(0) == pattern(0, 10) + pattern(20, 10))
        #expect(sink.gaps == [StreamGap(connection: ConnectionID(0), direction: .clientToServer, offset: 10, capturedOffset: 10, length: 10, reason: .notCaptured)])
        #expect(sink.summary(0)[.clientToServer].gapBytes == 10)
    }

    @Test func snaplenCutPayloadIsAGapNotInventedBytes() {
        var c = Conversation()
        c.handshake()
        c.send(client, server, seq: 1001, [.ack], pattern(0, 10), captureLength: 4)
        c.send(client, server, seq: 1011, [.ack], pattern(10, 5))
        let sink = c.finish()
        #expect(sink.stream(0) == pattern(0, 4) + pattern(10, 5))
        #expect(sink.gaps.map(\.reason) == [.truncatedPayload])
        #expect(sink.gaps.map(\.length) == [6])
    }

    @Test func aFullBufferSkipsTheHoleAndCarriesOn() {
        var options = ReassemblyOptions()
        options.maxBufferedBytesPerDirection = 300
        var c = Conversation(options: options)
        c.handshake()
        c.send(client, server, seq: 1001, [.ack], pattern(0, 100))
        for i in 2..<6 { c.send(client, server, seq: 1001 + UInt32(i * 100), [.ack], pattern(i * 100, 100)) }
        let sink = c.finish()
        #expect(sink.gaps.first?.reason == .bufferLimit)
        #expect(sink.gaps.first?.offset == 100 && sink.gaps.first?.length == 100)
        #expect(sink.stream(0) == pattern(0, 100) + pattern(200, 400))
        #expect(c.table.context.bufferedBytes == 0)
    }

    /// The out-of-order buffer and the skipped holes are one box a direction allocates at its
    /// first buffered segment or buffer-limit gap: in-order data, retransmissions and snaplen
    /// cuts leave a direction without it, and a direction keeps it once made.
    @Test func onlyADirectionThatBuffersHoldsTheOutOfOrderState() {
        var options = ReassemblyOptions()
        options.maxBufferedBytesPerDirection = 300
        var c = Conversation(options: options)
        func holds() -> [Bool] { [c.table.connections[0].clientToServer.holdsReordering, c.table.connections[0].serverToClient.holdsReordering] }
        c.handshake()
        c.send(client, server, seq: 1001, [.ack], pattern(0, 100))
        c.send(client, server, seq: 1001, [.ack], pattern(0, 100))  // a retransmission
        c.send(client, server, seq: 1101, [.ack], pattern(100, 50), captureLength: 20)  // cut by the snaplen
        c.send(server, client, seq: 5001, [.ack, .psh], pattern(0, 40))
        #expect(holds() == [false, false])
        c.send(server, client, seq: 5061, [.ack], pattern(60, 20))  // ahead of a hole
        #expect(holds() == [false, true])
        c.send(server, client, seq: 5041, [.ack], pattern(40, 20))  // fills it: the box stays
        #expect(holds() == [false, true])
        for i in 2..<6 { c.send(client, server, seq: 1001 + UInt32(i * 100), [.ack], pattern(i * 100, 100)) }  // ahead of a hole, then past the buffer limit
        #expect(holds() == [true, true])
        let sink = c.finish()
        #expect(sink.stream(0, .serverToClient) == pattern(0, 80))
        #expect(sink.gaps.map(\.reason) == [.truncatedPayload, .bufferLimit])
    }

    @Test func aNewSYNOnAReusedFourTupleStartsANewConnection() {
        var c = Conversation()
        c.handshake(clientISN: 1000)
        c.send(client, server, seq: 1001, [.ack, .psh], pattern(0, 5))
        c.send(client, server, seq: 1006, [.fin, .ack])
        c.send(server, client, seq: 5001, [.fin, .ack])
        c.handshake(clientISN: 90_000)
        c.send(client, server, seq: 90_001, [.ack, .psh], pattern(100, 7))
        let sink = c.finish()
        #expect(sink.opened.map(\.id.rawValue) == [0, 1])
        #expect(sink.stream(0) == pattern(0, 5))
        #expect(sink.stream(1) == pattern(100, 7))
        #expect(sink.summary(0).finalizedBy == .reused && sink.summary(0).end == .fin)
    }

    @Test func aRetransmittedSYNStaysInTheSameConnection() {
        var c = Conversation()
        c.send(client, server, seq: 1000, [.syn])
        c.send(client, server, seq: 1000, [.syn])
        c.send(server, client, seq: 5000, [.syn, .ack])
        c.send(client, server, seq: 1001, [.ack], pattern(0, 3))
        let sink = c.finish()
        #expect(sink.opened.count == 1)
        #expect(sink.stream(0) == pattern(0, 3))
    }

    @Test func aCaptureStartingMidStreamPicksUpAtTheFirstByte() {
        var c = Conversation()
        c.send(server, client, seq: 777_000, [.ack, .psh], pattern(0, 8))
        c.send(client, server, seq: 123, [.ack], pattern(50, 4))
        let sink = c.finish()
        let info = sink.opened[0]
        #expect(info.roleEvidence == .portHeuristic)
        #expect(info.server == server)  // lower port
        #expect(sink.stream(0, .serverToClient) == pattern(0, 8))
        #expect(sink.summary(0)[.serverToClient].startedMidStream)
        #expect(!sink.summary(0).synSeen)
    }

    @Test func keepAliveProbesAreNeitherDataNorConflicts() {
        var c = Conversation()
        c.handshake()
        c.send(client, server, seq: 1001, [.ack], pattern(0, 10))
        c.send(client, server, seq: 1010, [.ack], [0])
        let sink = c.finish()
        #expect(sink.stream(0) == pattern(0, 10))
        #expect(sink.conflicts.isEmpty)
        #expect(sink.summary(0)[.clientToServer].keepAlives == 1)
    }

    @Test func closedConnectionsAreFinalizedAfterTheTimeout() {
        var c = Conversation()
        c.handshake()
        c.send(client, server, seq: 1001, [.rst], at: 10)
        #expect(c.table.activeConnections == 1)
        c.send(Endpoint("10.0.0.9:1")!, server, seq: 1, [.syn], at: 200)
        #expect(c.table.activeConnections == 1)
        #expect(c.table.sink.closed.first?.finalizedBy == .closedTimeout)
    }

    /// `count` clients on ports from 1001 up whose connections to `server` fall in one group
    /// (`ConnectionBucket`), with `idle`'s when given: the connection limits hold per group.
    func clientsInOneGroup(_ count: Int, with idle: Endpoint? = nil) -> [Endpoint] {
        func group(_ e: Endpoint) -> Int { ConnectionBucket.of(FlowKey(e, server).mixedHash) }
        var found: [Endpoint] = [], port = 1000
        let wanted = idle.map(group) ?? group(Endpoint("10.0.0.1:1001")!)
        while found.count < count {
            port += 1
            let e = Endpoint("10.0.0.1:\(port)")!
            if group(e) == wanted { found.append(e) }
        }
        return found
    }

    /// Past its group's share of `maxClosedConnections` the group's least recently active closed
    /// ones go before their timeout; open ones stay, however old.
    @Test func theClosedLimitFinalizesTheLeastRecentlyActiveClosed() {
        var options = ReassemblyOptions()
        options.maxClosedConnections = 8 * ConnectionBucket.count
        options.closedTimeout = 3600 * 1_000_000_000
        var c = Conversation(options: options)
        let idle = Endpoint("10.0.0.2:999")!
        c.send(idle, server, seq: 1, [.syn])
        let clients = clientsInOneGroup(40, with: idle)
        for client in clients {
            c.send(client, server, seq: 1, [.syn])
            c.send(client, server, seq: 2, [.rst])
        }
        #expect(c.table.activeConnections <= 9)
        let finalizedEarly = c.table.context.closedLimitFinalized
        let sink = c.finish()
        #expect(sink.closed.count == 41)
        let early = sink.closed.filter { $0.finalizedBy == .closedLimit }
        #expect(early.count == finalizedEarly && early.count >= 32)
        #expect(early.allSatisfy { $0.info.client != idle && $0.end == .rst })
        // The earliest closed went first: the survivors are the last ones closed.
        let survivors = sink.closed.filter { $0.finalizedBy == .endOfInput && $0.info.client != idle }
        #expect(survivors.allSatisfy { $0.info.client.port >= clients[32].port })
    }

    /// Connections opening, closing, timing out and evicted in random order, with small limits:
    /// every group's list of slots names exactly the table's connections of that group, each
    /// where its activity entry says, and the closed counts are the closed connections.
    @Test func eachGroupListsItsConnectionsWhateverLeavesTheTable() {
        var options = ReassemblyOptions()
        options.maxConnections = 2 * ConnectionBucket.count
        options.maxClosedConnections = ConnectionBucket.count
        options.idleTimeout = 30 * 1_000_000_000
        options.closedTimeout = 10 * 1_000_000_000
        var c = Conversation(options: options)
        var random = SplitMix64(seed: 9)
        func check() {
            let t = c.table
            var listed = 0
            for b in 0..<ConnectionBucket.count {
                for (place, slot) in t.slotsInBucket[b].enumerated() {
                    #expect(Int(t.activity[Int(slot)].bucket) == b && Int(t.activity[Int(slot)].placeInBucket) == place)
                }
                listed += t.slotsInBucket[b].count
                #expect(t.closedInBucket[b] == t.slotsInBucket[b].count(where: { t.activity[Int($0)].isClosed }))
            }
            #expect(listed == t.connections.count)
        }
        for step in 0..<4_000 {
            let client = Endpoint("10.0.\(random.next() % 4).\(random.next() % 250 + 1):\(1000 + random.next() % 300)")!
            let flags: TCPFlags = [[.syn], [.ack], [.fin, .ack], [.rst]][Int(random.next() % 4)]
            c.send(client, server, seq: 1, flags, at: Int64(step / 20))
            if step % 500 == 0 { check() }
        }
        check()
        #expect(c.table.context.connectionLimitEvictions > 0 && c.table.context.closedLimitFinalized > 0, "both limits bound")
        _ = c.finish()
        check()
    }

    @Test func theConnectionLimitFinalizesTheLeastRecentlyActive() {
        var options = ReassemblyOptions()
        options.maxConnections = 4 * ConnectionBucket.count
        var c = Conversation(options: options)
        let clients = clientsInOneGroup(10)
        for client in clients { c.send(client, server, seq: 1, [.syn]) }
        #expect(c.table.activeConnections <= 4)
        let sink = c.finish()
        #expect(sink.closed.count == 10)
        let evicted = sink.closed.filter { $0.finalizedBy == .connectionLimit }
        #expect(evicted.count == 6)
        #expect(Set(evicted.map(\.info.client)) == Set(clients.prefix(6)), "the least recently active first")
        #expect(c.table.context.connectionLimitEvictions == 6)
    }
}
