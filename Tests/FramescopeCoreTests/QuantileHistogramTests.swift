import FramescopeSynthetic
import Testing

@testable import FramescopeCore

/// The quantile histogram against a model: every value's bucket starts at the value with its
/// bits below the top `bits + 1` cleared (exact below `2 << bits`), a quantile is the start of the
/// bucket holding the value of that rank (within the minimum and maximum), and adding values to
/// two histograms and merging them is adding them to one — for every precision, sparse and dense.
@Suite struct QuantileHistogramTests {
    /// Where `v`'s bucket starts.
    func lowerBound(_ v: Int64, bits: Int) -> Int64 {
        guard v >= Int64(2 << bits) else { return v }
        let exponent = 63 - v.leadingZeroBitCount
        return v & ~((Int64(1) << (exponent - bits)) - 1)
    }

    @Test func quantilesAreTheBucketStartsOfTheValuesOfTheirRank() {
        var generator = SplitMix64(seed: 5)
        for bits in 1...10 {
            for size in [1, 3, 9, 40, 2_000] {  // a few buckets stay sparse pairs, more go dense
                var values: [Int64] = (0..<size).map { _ in
                    switch Int.random(in: 0..<4, using: &generator) {
                    case 0: 0
                    case 1: Int64.random(in: 1..<64, using: &generator)
                    case 2: Int64.random(in: 64..<1 << 20, using: &generator)
                    default: Int64.random(in: 1 << 20...Int64.max, using: &generator)
                    }
                }
                var h = QuantileHistogram(bits: bits), first = QuantileHistogram(bits: bits), second = QuantileHistogram(bits: bits)
                for (i, v) in values.enumerated() {
                    h.add(v)
                    if i % 3 == 0 { first.add(v) } else { second.add(v) }
                }
                values.sort()
                #expect(h.count == size && h.minimum == values.first && h.maximum == values.last)
                func expected(_ q: Double) -> Int64 {
                    let rank = max(1, Int((q * Double(size)).rounded(.up)))
                    return min(max(lowerBound(values[rank - 1], bits: bits), values[0]), values[size - 1])
                }
                let qs = [0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 1.0]
                for q in qs {
                    #expect(h.quantile(q) == expected(q), "bits \(bits), \(size) values, q \(q)")
                    for p in qs where p <= q {  // two in one pass
                        let both = h.quantiles(p, q)
                        #expect(both.low == expected(p) && both.high == expected(q), "bits \(bits), \(size) values, q \(p) and \(q)")
                    }
                }
                // Every value under the largest power of two at or below it, in order, none empty.
                let bins = Dictionary(grouping: values) { $0 == 0 ? 0 : Int64(1) << (63 - $0.leadingZeroBitCount) }
                #expect(h.powerOfTwoBins.map { [$0.lower, Int64($0.count)] } == bins.keys.sorted().map { [$0, Int64(bins[$0]!.count)] })
                first.merge(second)
                #expect(first == h, "bits \(bits), \(size) values: merged halves")
            }
        }
    }

    /// A histogram whose values above 0 share one bucket keeps it as its maximum's; a value in
    /// another bucket, a merge or a sketch brings in pairs. Every path gives the same buckets as
    /// the model, with zeros before, between and after.
    @Test func oneBucketWithoutStorageBehavesAsPairs() {
        var generator = SplitMix64(seed: 11)
        for bits in [1, 3, 6] {
            for _ in 0..<200 {
                let base = Int64.random(in: 1...1 << 40, using: &generator)
                let start = lowerBound(base, bits: bits)
                let width = max(1, lowerBound(start * 2, bits: bits) / Int64(2 << bits))  // within one bucket
                var values: [Int64] = (0..<Int.random(in: 1...6, using: &generator)).map { _ in
                    Bool.random(using: &generator) ? 0 : start + Int64.random(in: 0..<width, using: &generator) % max(1, (start >> bits) >> 1)
                }
                if Bool.random(using: &generator) { values.append(Int64.random(in: 1...Int64.max, using: &generator)) }  // perhaps another bucket
                var h = QuantileHistogram(bits: bits), halves = [QuantileHistogram(bits: bits), QuantileHistogram(bits: bits)]
                for (i, v) in values.enumerated() {
                    h.add(v)
                    halves[i % 2].add(v)
                }
                let sorted = values.sorted()
                for q in [0.0, 0.5, 0.99, 1.0] {
                    let rank = max(1, Int((q * Double(values.count)).rounded(.up)))
                    #expect(h.quantile(q) == min(max(lowerBound(sorted[rank - 1], bits: bits), sorted[0]), sorted.last!))
                }
                #expect(h.powerOfTwoBins.reduce(0) { $0 + $1.count } == values.count)
                var merged = halves[1]
                merged.merge(halves[0])
                #expect(merged == h)
                var intoEmpty = QuantileHistogram(bits: bits)
                intoEmpty.merge(h)
                #expect(intoEmpty == h && intoEmpty.sketch.buckets.elementsEqual(h.sketch.buckets) { $0 == $1 })
                let sketch = h.sketch
                let rebuilt = QuantileHistogram(bits: bits, zeros: sketch.zeros, buckets: sketch.buckets, minimum: h.minimum, maximum: h.maximum)
                #expect(rebuilt == h)
                #expect(sketch.zeros + sketch.buckets.reduce(0) { $0 + $1.count } == values.count)
            }
        }
    }
}
