import Testing

@testable import FramescopeCore

/// Counts of 0–3 live in place and the rest in an array: held against a plain dictionary of
/// counts, value by value, through adds and merges that cross the boundary and the last bucket.
@Suite struct CountHistogramTests {
    func counted(_ values: [Int]) -> [(value: Int, count: Int)] {
        var counts: [Int: Int] = [:]
        for v in values { counts[min(v, CountHistogram.limit - 1), default: 0] += 1 }
        return counts.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    @Test func countsMatchADictionaryOnBothSidesOfTheInlineBuckets() {
        var random = SystemRandomNumberGenerator()
        for trial in 0..<200 {
            let values = (0..<(trial % 40)).map { _ in
                Bool.random(using: &random) ? Int.random(in: 0...3, using: &random) : Int.random(in: 0...100, using: &random)
            }
            var whole = CountHistogram(), left = CountHistogram(), right = CountHistogram()
            for (i, v) in values.enumerated() {
                whole.add(v)
                if i % 3 == 0 { left.add(v) } else { right.add(v) }
            }
            #expect(whole.nonZero.map(\.value) == counted(values).map(\.value))
            #expect(whole.nonZero.map(\.count) == counted(values).map(\.count))
            #expect(whole.total == values.count && whole.maximum == (values.max() ?? 0))
            left.merge(right)
            #expect(left == whole)  // (arrays of different lengths, the same counts)
        }
    }

    @Test func aShortDirectionsCountsAllocateNothing() {
        var h = CountHistogram()
        for v in [1, 1, 2, 3, 0] { h.add(v) }
        #expect(h.nonZero.map(\.value) == [0, 1, 2, 3])
        #expect(h.nonZero.map(\.count) == [1, 2, 1, 1])
        var other = CountHistogram()
        other.add(1)
        other.add(70)  // the last bucket
        h.merge(other)
        #expect(h.nonZero.map(\.value) == [0, 1, 2, 3, 63])
        #expect(h.nonZero.map(\.count) == [1, 3, 1, 1, 1])
        #expect(h.maximum == 70 && h.total == 7)
    }
}
