import Testing

@testable import FramescopeCore

/// A direction's unacknowledged segments: one in flight kept in place, more in storage. Held
/// against tshark's rule written plainly (every entry ending at or before the ACK goes; the
/// oldest ending exactly at it times the round trip) through runs that cross between the two.
@Suite struct UnackedListTests {
    typealias Unacked = TCPAnalysis.Unacked

    /// tshark's walk over a plain array.
    static func reference(_ list: inout [Unacked], ack: UInt32) -> Int64? {
        let gone = list.filter { Int32(bitPattern: $0.next &- ack) <= 0 }
        list.removeAll { Int32(bitPattern: $0.next &- ack) <= 0 }
        return gone.first { $0.next == ack }?.time
    }

    @Test func timesAndDropsAsTsharkWhateverIsInFlight() {
        var random = SystemRandomNumberGenerator()
        for trial in 0..<300 {
            var list = TCPAnalysis.UnackedList(), expected: [Unacked] = []
            var context = ReassemblyContext(options: ReassemblyOptions())
            var next = UInt32.random(in: 0...UInt32.max, using: &random)  // (sequence numbers wrap)
            let inFlight = [1, 2, 3, 70][trial % 4]  // at most this many sent before an ACK
            for step in 0..<200 {
                for _ in 0..<Int.random(in: 0...inFlight, using: &random) {
                    // Mostly in order; now and then a retransmission ending before the last.
                    let end = Int.random(in: 0..<8, using: &random) == 0 ? next &- UInt32.random(in: 1...500, using: &random) : next &+ UInt32.random(in: 1...1460, using: &random)
                    if Int32(bitPattern: end &- next) > 0 { next = end }
                    let entry = Unacked(next: end, time: Int64(step * 1000 + expected.count))
                    list.append(entry)
                    expected.append(entry)
                    context.unackedSegments += 1
                }
                // An ACK of everything, of part (maybe one entry's end exactly), or of nothing new.
                let ack: UInt32 =
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0: next
                    case 1: expected.randomElement(using: &random)?.next ?? next
                    default: (expected.first?.next ?? next) &- 1
                    }
                let timed = list.count > 0 ? list.acknowledge(ack, context: &context) : nil
                #expect(timed == Self.reference(&expected, ack: ack))
                #expect(list.count == expected.count)
                #expect(context.unackedSegments == expected.count)
            }
        }
    }

    /// A handshake, and a request answered by its response, never allocate storage.
    @Test func oneSegmentInFlightAllocatesNothing() {
        var list = TCPAnalysis.UnackedList()
        var context = ReassemblyContext(options: ReassemblyOptions())
        for round in 0..<100 {
            let end = UInt32(1 + round * 100)
            list.append(Unacked(next: end, time: Int64(round)))
            context.unackedSegments += 1
            #expect(list.count == 1 && list.entries.capacity == 0)
            #expect(list.acknowledge(end, context: &context) == Int64(round))
            #expect(list.count == 0 && list.entries.capacity == 0)
        }
        list.append(Unacked(next: 10, time: 1))
        list.append(Unacked(next: 20, time: 2))
        context.unackedSegments += 2
        #expect(list.count == 2 && list.entries.capacity > 0)
        #expect(list.acknowledge(20, context: &context) == 2)
        #expect(context.unackedSegments == 0)
    }
}
