@testable import FramescopeCore
import FramescopeSynthetic
import Testing

/// Latencies by type keep the 256 lowest type values, whatever order messages come in, and two
/// halves of the messages combined keep what all of them in one would.
@Suite struct LatencyByTypeTests {
    @Test func theLowestValuesAreTimedInAnyOrderAndHalvesCombine() {
        var random = SplitMix64(seed: 4)
        let messages = (0..<20_000).map { _ in (type: random.next() % 700, latency: Int64(random.next() % 10_000)) }
        func timed(_ order: [(type: UInt64, latency: Int64)]) -> LatencyByType {
            var l = LatencyByType()
            for m in order { l.add(m.latency, type: m.type) }
            return l
        }
        func summary(_ l: LatencyByType) -> [UInt64: Int] { l.byType.mapValues { Int($0.count) } }
        let forward = timed(messages), backward = timed(messages.reversed())
        #expect(forward.byType.count == LatencyByType.limit)
        #expect(Set(forward.byType.keys) == Set(Set(messages.map(\.type)).sorted().prefix(LatencyByType.limit)))
        #expect(summary(forward) == summary(backward) && forward.untimed == backward.untimed)
        #expect(forward.untimed + summary(forward).values.reduce(0, +) == messages.count)
        var halves = timed(messages.filter { $0.latency % 2 == 0 })
        halves.absorb(timed(messages.filter { $0.latency % 2 == 1 }))
        #expect(summary(halves) == summary(forward) && halves.untimed == forward.untimed)
        let (a, b) = (halves.byType[3]!.sketch, forward.byType[3]!.sketch)
        #expect(a.zeros == b.zeros && a.buckets.map(\.index) == b.buckets.map(\.index) && a.buckets.map(\.count) == b.buckets.map(\.count))
    }
}
