@testable import FramescopeCore
import Testing

@Suite struct EventTimelineTests {
    /// `units` of the first bucket width (2^20 ns, about 1 ms) after an origin.
    private func at(_ units: Int64) -> Timestamp { Timestamp(nanoseconds: 5_000_000_000 + units << 20) }

    @Test func nothingIsKeptBeforeTheFirstEvent() {
        let t = EventTimeline()
        #expect(t.isEmpty && t.series(.partial).isEmpty)
    }

    @Test func bucketsWidenByDoublingAndLoseNoEvent() {
        var t = EventTimeline()
        t.add(.partial, at: at(0))
        t.add(.merged, at: at(0))
        t.add(.partial, at: at(31))
        #expect(t.bucketNanoseconds == 1 << 20 && t.origin == at(0))
        #expect(t.series(.partial) == [1] + Array(repeating: 0, count: 30) + [1])
        t.add(.malformed, at: at(32))  // one past the last bucket: twice as wide
        #expect(t.bucketNanoseconds == 2 << 20)
        #expect(t.series(.partial) == [1] + Array(repeating: 0, count: 14) + [1, 0])
        #expect(t.series(.malformed) == Array(repeating: 0, count: 16) + [1])
        t.add(.merged, at: at(10_000))  // about 10 s: 512 units a bucket
        #expect(t.bucketNanoseconds == 512 << 20)
        #expect(t.series(.partial).reduce(0, +) == 2 && t.series(.merged).reduce(0, +) == 2 && t.series(.malformed).reduce(0, +) == 1)
        #expect(t.series(.partial) == [2] + Array(repeating: 0, count: 19))
        #expect(t.series(.merged).last == 1 && t.series(.merged).count == 20)
    }

    @Test func anEarlierTimestampCountsInTheFirstBucket() {
        var t = EventTimeline()
        t.add(.partial, at: at(10))
        t.add(.partial, at: at(3))  // capture timestamps can go backwards
        #expect(t.series(.partial) == [2])
    }
}
