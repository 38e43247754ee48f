/// Counts of small integers (segments per message, messages per segment): exact up to
/// `limit - 1`, the rest in the last bucket; the maximum is kept exactly.
public struct CountHistogram: Sendable, Equatable {
    public static let limit = 64
    /// The counts of 0–3 in place: most messages take one segment and most segments carry one to
    /// three, so a short connection's histograms allocate nothing (four arrays a connection were
    /// a tenth of the allocations of a capture of short connections).
    private var small = FourCounts()
    /// The counts of 4 and up (index 0: the value 4), allocated at the first such value.
    private var large: [UInt32] = []
    public private(set) var maximum = 0
    public private(set) var total = 0

    public init() {}

    /// 0–3 inline (most counts of segments per message and messages per segment, each about
    /// once a message), the rest out of line.
    @inline(__always)
    public mutating func add(_ value: Int) {
        if value < 4 {
            small[value] &+= 1
            if value > maximum { maximum = value }
            total &+= 1
        } else {
            addLarge(value)
        }
    }

    @inline(never)
    private mutating func addLarge(_ value: Int) {
        let index = min(value, Self.limit - 1) - 4
        if index >= large.count { grow(to: index + 1) }
        large[index] &+= 1
        if value > maximum { maximum = value }
        total += 1
    }

    /// Zero buckets up to `count`, in one allocation of at least 8.
    private mutating func grow(to count: Int) {
        if large.capacity < count { large.reserveCapacity(max(count, 8)) }
        large.append(contentsOf: repeatElement(0, count: count - large.count))
    }

    /// Calls `body` with `(value, count)` for every value seen, in order.
    public func forEachNonZero(_ body: (Int, Int) -> Void) {
        for value in 0..<4 where small[value] > 0 { body(value, Int(small[value])) }
        for (index, n) in large.enumerated() where n > 0 { body(index + 4, Int(n)) }
    }

    public var isEmpty: Bool { total == 0 }

    /// Every value counted is `maximum` (exactly: the last bucket's values may differ): the
    /// histogram says nothing the maximum and the total do not.
    public var holdsOnlyMaximum: Bool {
        guard total > 0, maximum < Self.limit - 1 else { return false }
        return maximum < 4 ? Int(small[maximum]) == total : Int(large[maximum - 4]) == total
    }

    /// `(value, count)` for every value seen; the last bucket stands for `limit - 1` and above.
    public var nonZero: [(value: Int, count: Int)] {
        var all: [(value: Int, count: Int)] = []
        forEachNonZero { all.append(($0, $1)) }
        return all
    }

    public mutating func merge(_ other: CountHistogram) {
        for value in 0..<4 { small[value] &+= other.small[value] }
        if other.large.count > large.count { grow(to: other.large.count) }
        for i in other.large.indices { large[i] &+= other.large[i] }
        maximum = max(maximum, other.maximum)
        total += other.total
    }

    public static func == (a: CountHistogram, b: CountHistogram) -> Bool {
        guard a.small == b.small, a.maximum == b.maximum, a.total == b.total else { return false }
        let n = max(a.large.count, b.large.count)
        return (0..<n).allSatisfy { (a.large.indices.contains($0) ? a.large[$0] : 0) == (b.large.indices.contains($0) ? b.large[$0] : 0) }
    }
}

/// Four counters in place (`SIMD4` would align its holder to 16 bytes).
struct FourCounts: Sendable, Equatable {
    private var c0: UInt32 = 0, c1: UInt32 = 0, c2: UInt32 = 0, c3: UInt32 = 0

    subscript(i: Int) -> UInt32 {
        get {
            switch i {
            case 0: c0
            case 1: c1
            case 2: c2
            default: c3
            }
        }
        set {
            switch i {
            case 0: c0 = newValue
            case 1: c1 = newValue
            case 2: c2 = newValue
            default: c3 = newValue
            }
        }
    }
}

/// Quantiles of non-negative values in bounded memory: values below `2 << bits` exactly, above
/// in `1 << bits` log-linear sub-buckets per power of two (quantiles within 1/2^bits of the true
/// value, rounded down); minimum and maximum exact. Per-direction histograms are coarse (bits 3:
/// small, cache-friendly), the totals fine (6).
///
/// While every value above 0 falls in one bucket, that bucket is the maximum's and its count is
/// `count - zeros`: no storage (a direction of one message, or of messages of about one size,
/// allocated 64 bytes for it). Then up to `sparseLimit` buckets are kept as sorted (index, count)
/// pairs, then as a dense array up to the largest bucket used: a short connection's few messages
/// would otherwise pay for the whole range (one latency of a second is bucket 136, a 544-byte
/// array).
public struct QuantileHistogram: Sendable, Equatable {
    private let storedBits: UInt8
    public var bits: Int { Int(storedBits) }
    private var isDense = false
    /// Sparse: index, count, index, count… sorted by index (empty: the one bucket, if any, is
    /// the maximum's). Dense: the count of every bucket.
    private var buckets: [UInt32] = []
    static let sparseLimit = 8
    /// Zeros are counted apart: most messages arrive in one segment (latency 0), and a counter
    /// is cheaper than a bucket.
    private var zeros = 0
    public private(set) var count = 0
    public private(set) var minimum: Int64 = .max
    public private(set) var maximum: Int64 = 0

    public init(bits: Int = 3) {
        precondition((1...10).contains(bits))
        storedBits = UInt8(bits)
    }

    /// The common cases inline (a zero, a bucket of a dense histogram): four adds a message, as
    /// calls a quarter of completing one.
    @inline(__always)
    public mutating func add(_ value: Int64) {
        guard value > 0 else {
            zeros &+= 1
            count &+= 1
            minimum = 0
            return
        }
        let index = bucket(value)
        if isDense && index < buckets.count {
            buckets[index] &+= 1
            count &+= 1
            if value < minimum { minimum = value }
            if value > maximum { maximum = value }
        } else {
            addOutOfLine(value, index: index)
        }
    }

    @inline(never)
    private mutating func addOutOfLine(_ value: Int64, index: Int) {
        if buckets.isEmpty && !isDense && (count == zeros || index == bucket(maximum)) {
            // Still one bucket: counted by `count`, found by `maximum`.
        } else {
            add(count: 1, toBucket: index)
        }
        count += 1
        if value < minimum { minimum = value }
        if value > maximum { maximum = value }
    }

    @inline(never)
    private mutating func add(count n: UInt32, toBucket index: Int) {
        if let only = onlyBucket { buckets = [UInt32(only.index), only.count] }  // a second bucket: pairs from now on
        if isDense {
            if index >= buckets.count { buckets.append(contentsOf: repeatElement(0, count: index + 1 - buckets.count)) }
            buckets[index] &+= n
            return
        }
        var i = 0
        while i < buckets.count && Int(buckets[i]) < index { i += 2 }
        if i < buckets.count && Int(buckets[i]) == index {
            buckets[i + 1] &+= n
        } else if buckets.count < 2 * Self.sparseLimit {
            // Room for two pairs first (a short direction's sizes fall in one or two buckets:
            // 48 bytes, not 96), then for all of them.
            if buckets.count + 2 > buckets.capacity { buckets.reserveCapacity(buckets.isEmpty ? 4 : 2 * Self.sparseLimit) }
            buckets.insert(n, at: i)
            buckets.insert(UInt32(index), at: i)
        } else {
            makeDense()
            add(count: n, toBucket: index)
        }
    }

    private mutating func makeDense() {
        // Sparse pairs are sorted: the last holds the largest index.
        var dense = [UInt32](repeating: 0, count: buckets.isEmpty ? 0 : Int(buckets[buckets.count - 2]) + 1)
        for k in stride(from: 0, to: buckets.count, by: 2) { dense[Int(buckets[k])] = buckets[k + 1] }
        buckets = dense
        isDense = true
    }

    /// `(index, count)` of every bucket holding values, in index order.
    private var nonEmptyBuckets: [(index: Int, count: UInt32)] {
        var all: [(index: Int, count: UInt32)] = []
        forEachBucket { all.append(($0, $1)) }
        return all
    }

    /// The one bucket holding every value above 0, while no storage is needed for it.
    private var onlyBucket: (index: Int, count: UInt32)? {
        buckets.isEmpty && !isDense && count > zeros ? (bucket(maximum), UInt32(truncatingIfNeeded: count - zeros)) : nil
    }

    /// Calls `body` with the index and count of every bucket holding values, in index order.
    @inline(__always)
    private func forEachBucket(_ body: (Int, UInt32) -> Void) {
        if let only = onlyBucket {
            body(only.index, only.count)
        } else {
            buckets.withUnsafeBufferPointer { b in  // (no bounds check per bucket)
                if isDense {
                    for i in 0..<b.count where b[i] > 0 { body(i, b[i]) }
                } else {
                    for k in stride(from: 0, to: b.count, by: 2) { body(Int(b[k]), b[k &+ 1]) }
                }
            }
        }
    }

    /// Adds `other`'s counts; values keep `other`'s precision when it is coarser.
    public mutating func merge(_ other: QuantileHistogram) {
        guard other.count > 0 else { return }
        // Buckets before zeros: this one's only bucket, if it has one, is counted as `count - zeros`.
        other.forEachBucket { i, n in add(count: n, toBucket: other.bits == bits ? i : bucket(other.lowerBound(i))) }
        zeros += other.zeros
        count += other.count
        minimum = min(minimum, other.minimum)
        maximum = max(maximum, other.maximum)
    }

    /// The value at quantile `q` (0...1), or 0 when empty.
    public func quantile(_ q: Double) -> Int64 {
        quantiles(q, q).low
    }

    /// The values at quantiles `p` ≤ `q`, in one pass over the buckets that stops at the second
    /// (a listing asks for the median and the 99th percentile of every direction's sizes: two
    /// passes over every bucket, each with a `ceil` call, were 330 instructions a direction).
    public func quantiles(_ p: Double, _ q: Double) -> (low: Int64, high: Int64) {
        precondition(p <= q, "quantiles out of order")
        guard count > 0 else { return (0, 0) }
        // ⌈q × count⌉, at least 1: `(q * Double(count)).rounded(.up)` without the library call.
        @inline(__always) func rank(_ q: Double) -> Int {
            let x = q * Double(count)
            let whole = Int(x)
            return max(1, Double(whole) < x ? whole + 1 : whole)
        }
        let low = rank(p), high = rank(q)
        if high <= zeros { return (0, 0) }
        // The buckets where the counts past the zeros reach each rank (-1: none does).
        var lowBucket = -1, highBucket = -1
        if let only = onlyBucket {
            (lowBucket, highBucket) = (only.index, only.index)  // it holds every value above 0
        } else {
            var seen = zeros
            buckets.withUnsafeBufferPointer { b in
                @inline(__always) func take(_ index: Int, _ n: UInt32) -> Bool {
                    seen &+= Int(n)
                    if lowBucket < 0 && seen >= low { lowBucket = index }
                    if seen >= high { highBucket = index }
                    return highBucket >= 0
                }
                if isDense {
                    for i in 0..<b.count where b[i] > 0 { if take(i, b[i]) { break } }
                } else {
                    for k in stride(from: 0, to: b.count, by: 2) { if take(Int(b[k]), b[k &+ 1]) { break } }
                }
            }
        }
        @inline(__always) func value(_ bucket: Int, rank: Int) -> Int64 {
            if rank <= zeros { return 0 }
            return bucket < 0 ? maximum : min(max(lowerBound(bucket), minimum), maximum)
        }
        return (value(lowBucket, rank: low), value(highBucket, rank: high))
    }

    /// Counts by power of two, exact (buckets never straddle one): `(lower, count)` where a
    /// value `v` counts under the largest power of two ≤ `v` (0 under 0); only non-empty bins.
    public var powerOfTwoBins: [(lower: Int64, count: Int)] {
        var bins: [(lower: Int64, count: Int)] = []
        forEachPowerOfTwoBin { bins.append(($0, $1)) }
        return bins
    }

    /// Every value lies in one bin of `powerOfTwoBins`: the minimum's, which it and the count say.
    public var fillsOnePowerOfTwoBin: Bool {
        count > 0 && minimum.leadingZeroBitCount == maximum.leadingZeroBitCount
    }

    /// `powerOfTwoBins` one at a time, lowest first, without storage: buckets come in index order
    /// and never straddle a power of two, so a bin is a run of them (the JSON listing writes them
    /// for every direction: counting 64 bins on the stack and scanning them was 1,400
    /// instructions a direction).
    public func forEachPowerOfTwoBin(_ body: (_ lower: Int64, _ count: Int) -> Void) {
        var bin = 0, n = zeros  // bin 0 holds the zeros; bin b ≥ 1 the values in [2^(b-1), 2^b)
        // A bucket's bin from its index, without its lower bound: below `linear` a bucket is its
        // value; above, `1 << bits` buckets per power of two (a lower bound per bucket, with
        // checked shifts, was most of the bins' 670 instructions a direction).
        let bits = Int(storedBits), linear = 2 &<< bits
        forEachBucket { i, count in
            let b = i < linear ? 64 &- UInt64(truncatingIfNeeded: i).leadingZeroBitCount : (i &- linear) &>> bits &+ bits &+ 2
            if b != bin {
                if n > 0 { body(bin == 0 ? 0 : Int64(1) &<< (bin &- 1), n) }
                bin = b
                n = 0
            }
            n &+= Int(count)
        }
        if n > 0 { body(bin == 0 ? 0 : Int64(1) &<< (bin &- 1), n) }
    }

    /// Values that were 0, and `(index, count)` of every other bucket in use: with `bits`,
    /// `minimum` and `maximum`, the whole histogram (what a report keeps for `merge`).
    public var sketch: (zeros: Int, buckets: [(index: Int, count: Int)]) {
        (zeros, nonEmptyBuckets.map { ($0.index, Int($0.count)) })
    }

    /// The histogram a `sketch` describes; nil when it cannot be one (an index past the largest
    /// value, a count past 2³²−1, a minimum above the maximum).
    public init?(bits: Int, zeros: Int, buckets: [(index: Int, count: Int)], minimum: Int64, maximum: Int64) {
        guard (1...10).contains(bits), zeros >= 0, minimum >= 0, minimum <= maximum || (zeros == 0 && buckets.isEmpty) else { return nil }
        self.init(bits: bits)
        self.zeros = zeros
        // `count` (zeros only) until every bucket is in: the buckets are pairs, not the maximum's.
        count = zeros
        var total = zeros
        let last = bucket(.max)
        for (index, n) in buckets {
            guard (0...last).contains(index), (1...Int(UInt32.max)).contains(n) else { return nil }
            add(count: UInt32(n), toBucket: index)
            total += n
        }
        count = total
        if count > 0 { (self.minimum, self.maximum) = (minimum, maximum) }
    }

    public static func == (a: QuantileHistogram, b: QuantileHistogram) -> Bool {
        (a.bits, a.zeros, a.count, a.minimum, a.maximum) == (b.bits, b.zeros, b.count, b.minimum, b.maximum)
            && a.nonEmptyBuckets.elementsEqual(b.nonEmptyBuckets) { $0 == $1 }
    }

    /// Masking shifts and wrapping arithmetic: `bits` is 1…10 and `exponent - bits` 1…62, so
    /// Swift's checks for shifts past the width (a branch each: a third of `add`) never apply.
    @inline(__always)
    private func bucket(_ v: Int64) -> Int {
        let bits = Int(storedBits), linear = 2 &<< bits
        if v < Int64(linear) { return Int(v) }
        let exponent = 63 &- v.leadingZeroBitCount  // ≥ bits + 1
        let sub = Int(truncatingIfNeeded: v &>> Int64(exponent &- bits)) & ((1 &<< bits) &- 1)
        return linear &+ (exponent &- bits &- 1) &<< bits &+ sub
    }

    /// The smallest value in bucket `i` (a bucket index is at most `bucket(.max)`: the masking
    /// shifts never wrap).
    private func lowerBound(_ i: Int) -> Int64 {
        let bits = Int(storedBits), linear = 2 &<< bits
        if i < linear { return Int64(i) }
        let exponent = (i &- linear) &>> bits &+ bits &+ 1, sub = (i &- linear) & ((1 &<< bits) &- 1)
        return (Int64(1) &<< Int64(exponent)) | (Int64(sub) &<< Int64(exponent &- bits))
    }
}
