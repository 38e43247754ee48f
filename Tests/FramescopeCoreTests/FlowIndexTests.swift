@testable import FramescopeCore
import Testing

@Suite struct FlowIndexTests {
    func key(_ i: Int) -> FlowKey {
        FlowKey(Endpoint(address: IPAddress(ipv4: UInt32(0x0A00_0000 + i)), port: UInt16(i & 0xFFFF)), Endpoint(address: IPAddress(ipv4: 0x0A00_00FF), port: 9000))
    }

    /// A connection moved to another slot is found there, even when its entry lies past the
    /// tombstones of removed keys (the flow table moves the last connection into a freed slot).
    @Test func aMovedKeyIsFoundAtItsNewSlotPastTombstones() {
        var index = FlowIndex(capacity: 16)
        var keyAt: [Int: FlowKey] = [:]  // what the flow table's records hold
        for i in 0..<2000 {
            index.insert(key(i), slot: i)
            keyAt[i] = key(i)
        }
        for i in stride(from: 0, to: 2000, by: 3) { index.remove(key(i), slot: i) }
        for i in 0..<2000 where i % 3 != 0 {
            index.move(key(i), from: i, to: 5000 + i)
            keyAt[5000 + i] = key(i)
        }
        for i in 0..<2000 {
            #expect(index.find(key(i)) { keyAt[$0]! == key(i) } == (i % 3 == 0 ? nil : 5000 + i))
        }
        #expect(index.count == 2000 - 667)
    }

    /// A table holding a share of the connection groups (a `--threads` shard: the reading
    /// thread's 12 of 64 at `-t 2`) places its keys as evenly as one holding them all: the
    /// groups are the hash's low bits, and an index placing by them saw a twelfth as many
    /// home positions and piled its entries into long probe runs.
    @Test func aShareOfTheGroupsIsPlacedAsEvenlyAsAll() {
        func filled(_ take: (FlowKey) -> Bool) -> FlowIndex {
            var index = FlowIndex(capacity: 16)
            var i = 0, placed = 0
            while placed < 3_000 {
                if take(key(i)) {
                    index.insert(key(i), slot: placed)
                    placed += 1
                }
                i += 1
            }
            return index
        }
        let all = filled { _ in true }
        let share = filled { ConnectionBucket.of($0.mixedHash) < 12 }
        #expect(all.meanDisplacement < 2)
        #expect(share.meanDisplacement < 2, "a share of the groups: \(share.meanDisplacement) positions past home on average")
    }

    /// Keys whose hashes collide in the half the index keeps are told apart by the records' keys.
    @Test func equalHashesAreToldApartByTheKey() {
        var index = FlowIndex(capacity: 16)
        var keyAt: [Int: FlowKey] = [:]
        for i in 0..<500 {
            index.insert(key(i), slot: i)
            keyAt[i] = key(i)
        }
        // A lookup that never matches a record finds nothing, whatever the hashes say.
        #expect((0..<500).allSatisfy { index.find(key($0)) { _ in false } == nil })
        #expect((0..<500).allSatisfy { i in index.find(key(i)) { keyAt[$0]! == key(i) } == i })
    }

    /// The hash a segment carries (made where it is decoded, on the reading thread) is its
    /// key's, whichever way the segment goes: the flow table looks its connection up by it.
    @Test func aSegmentCarriesItsKeysHashBothWays() {
        let v6 = IPAddress(high: 0x2001_0DB8_0000_0000, low: 1)
        for i in 0..<300 {
            let client = Endpoint(address: i % 2 == 0 ? IPAddress(ipv4: UInt32(0x0A00_0000 + i)) : v6, port: UInt16(40000 + i))
            let server = Endpoint(address: IPAddress(ipv4: 0x0A00_00FF), port: UInt16(i % 7 == 0 ? 40000 + i : 9000))
            let there = TCPSegment(source: client, destination: server, sequence: 1, flags: .ack, payload: UnsafeRawBufferPointer(start: nil, count: 0))
            let back = TCPSegment(source: server, destination: client, sequence: 1, flags: .ack, payload: UnsafeRawBufferPointer(start: nil, count: 0))
            #expect(there.connectionHash == FlowKey(client, server).mixedHash)
            #expect(back.connectionHash == there.connectionHash)
        }
    }
}
