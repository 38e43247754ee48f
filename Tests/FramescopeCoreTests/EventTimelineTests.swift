@testable import FramescopeCore
import FramescopeSynthetic
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

    /// A series is what the reports list: events all in the first bucket are the totals again.
    @Test func aTimelineSpansBucketsOnceAnEventLandsPastTheFirst() {
        var t = EventTimeline()
        #expect(!t.spansBuckets)
        t.add(.merged, at: at(0))
        t.add(.partial, at: Timestamp(nanoseconds: at(1).nanoseconds - 1))  // the first bucket's last nanosecond
        #expect(!t.spansBuckets && t.bucketsInUse == 1)
        t.add(.malformed, at: at(1))
        #expect(t.spansBuckets && t.series(.malformed) == [0, 1])
    }

    @Test func anEarlierTimestampCountsInTheFirstBucket() {
        var t = EventTimeline()
        t.add(.partial, at: at(10))
        t.add(.partial, at: at(3))  // capture timestamps can go backwards
        #expect(t.series(.partial) == [2])
    }

    /// Buckets are kept up to the last one used: on random event streams the series are what 32
    /// fixed buckets, widened by merging neighbours, give.
    @Test func keepingOnlyTheBucketsUsedChangesNoSeries() {
        var random = SplitMix64(seed: 7)
        for _ in 0..<500 {
            var t = EventTimeline()
            var dense = [[Int]](repeating: [Int](repeating: 0, count: EventTimeline.bucketCount), count: 3)
            var shift: Int64 = 20, origin: Int64?
            for _ in 0..<Int(random.next() % 40) + 1 {
                let kind = EventTimeline.Kind(rawValue: Int(random.next() % 3))!
                // Mostly within a few buckets, sometimes seconds or hours later, sometimes earlier.
                let span: Int64 = [1 << 22, 1 << 26, 1 << 34, 1 << 42][Int(random.next() % 4)]
                let time = 5_000_000_000 + Int64(random.next() % UInt64(span)) - (random.next() % 8 == 0 ? 1 << 21 : 0)
                t.add(kind, at: Timestamp(nanoseconds: time))
                if origin == nil { origin = time }
                let elapsed = max(0, time - origin!)
                while elapsed >> shift >= Int64(EventTimeline.bucketCount) {
                    for k in 0..<3 {
                        dense[k] = (0..<EventTimeline.bucketCount).map { b in
                            b < EventTimeline.bucketCount / 2 ? dense[k][2 * b] + dense[k][2 * b + 1] : 0
                        }
                    }
                    shift += 1
                }
                dense[kind.rawValue][Int(elapsed >> shift)] += 1
            }
            let last = (0..<EventTimeline.bucketCount).last { b in (0..<3).contains { dense[$0][b] > 0 } }!
            #expect(t.bucketNanoseconds == 1 << shift)
            for kind in EventTimeline.Kind.allCases {
                #expect(t.series(kind) == Array(dense[kind.rawValue][0...last]))
            }
        }
    }
}
