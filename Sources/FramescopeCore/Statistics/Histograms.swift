/// Counts of small integers (segments per message, messages per segment): exact up to
/// `limit - 1`, the rest in the last bucket; the maximum is kept exactly.
public struct CountHistogram: Sendable, Equatable {
    public static let limit = 64
    public private(set) var buckets: [UInt32] = []
    public private(set) var maximum = 0
    public private(set) var total = 0

    public init() {}

    public mutating func add(_ value: Int) {
        let index = min(value, Self.limit - 1)
        if index >= buckets.count { buckets += [UInt32](repeating: 0, count: index + 1 - buckets.count) }
        buckets[index] &+= 1
        if value > maximum { maximum = value }
        total += 1
    }

    /// `(value, count)` for every value seen; the last bucket stands for `limit - 1` and above.
    public var nonZero: [(value: Int, count: Int)] {
        buckets.indices.filter { buckets[$0] > 0 }.map { ($0, Int(buckets[$0])) }
    }

    public mutating func merge(_ other: CountHistogram) {
        if other.buckets.count > buckets.count { buckets += [UInt32](repeating: 0, count: other.buckets.count - buckets.count) }
        for i in other.buckets.indices { buckets[i] &+= other.buckets[i] }
        maximum = max(maximum, other.maximum)
        total += other.total
    }
}

/// Quantiles of non-negative values in bounded memory: values below `2 << bits` exactly, above
/// in `1 << bits` log-linear sub-buckets per power of two (quantiles within 1/2^bits of the true
/// value, rounded down); minimum and maximum exact. Buckets grow only up to the largest value
/// seen. Per-direction histograms are coarse (bits 3: small, cache-friendly), the totals fine (6).
public struct QuantileHistogram: Sendable, Equatable {
    public let bits: Int
    private var buckets: [UInt32] = []
    /// Zeros are counted apart: most messages arrive in one segment (latency 0), and a counter
    /// is cheaper than a bucket.
    private var zeros = 0
    public private(set) var count = 0
    public private(set) var minimum: Int64 = .max
    public private(set) var maximum: Int64 = 0
    public private(set) var sum: Int64 = 0

    public init(bits: Int = 3) {
        precondition((1...10).contains(bits))
        self.bits = bits
    }

    public mutating func add(_ value: Int64) {
        guard value > 0 else {
            zeros += 1
            count += 1
            minimum = 0
            return
        }
        let v = value
        let index = bucket(v)
        if index >= buckets.count { buckets += [UInt32](repeating: 0, count: index + 1 - buckets.count) }
        buckets[index] &+= 1
        count += 1
        if v < minimum { minimum = v }
        if v > maximum { maximum = v }
        sum &+= v
    }

    /// Adds `other`'s counts; values keep `other`'s precision when it is coarser.
    public mutating func merge(_ other: QuantileHistogram) {
        guard other.count > 0 else { return }
        zeros += other.zeros
        if other.bits == bits {
            if other.buckets.count > buckets.count { buckets += [UInt32](repeating: 0, count: other.buckets.count - buckets.count) }
            for i in other.buckets.indices { buckets[i] &+= other.buckets[i] }
        } else {
            for (i, n) in other.buckets.enumerated() where n > 0 {
                let index = bucket(other.lowerBound(i))
                if index >= buckets.count { buckets += [UInt32](repeating: 0, count: index + 1 - buckets.count) }
                buckets[index] &+= n
            }
        }
        count += other.count
        minimum = min(minimum, other.minimum)
        maximum = max(maximum, other.maximum)
        sum &+= other.sum
    }

    /// The value at quantile `q` (0...1), or 0 when empty.
    public func quantile(_ q: Double) -> Int64 {
        guard count > 0 else { return 0 }
        let rank = max(1, Int((q * Double(count)).rounded(.up)))
        if rank <= zeros { return 0 }
        var seen = zeros
        for (i, n) in buckets.enumerated() where n > 0 {
            seen += Int(n)
            if seen >= rank { return min(max(lowerBound(i), minimum), maximum) }
        }
        return maximum
    }

    /// Counts by power of two, exact (buckets never straddle one): `(lower, count)` where a
    /// value `v` counts under the largest power of two ≤ `v` (0 under 0); only non-empty bins.
    public var powerOfTwoBins: [(lower: Int64, count: Int)] {
        var bins = [Int](repeating: 0, count: 64)
        for (i, n) in buckets.enumerated() where n > 0 {
            let v = lowerBound(i)
            bins[v == 0 ? 0 : 64 - v.leadingZeroBitCount] += Int(n)
        }
        bins[0] += zeros
        return bins.indices.filter { bins[$0] > 0 }.map { ($0 == 0 ? 0 : Int64(1) << ($0 - 1), bins[$0]) }
    }

    @inline(__always)
    private func bucket(_ v: Int64) -> Int {
        let linear = 2 << bits
        if v < Int64(linear) { return Int(v) }
        let exponent = 63 - v.leadingZeroBitCount  // ≥ bits + 1
        let sub = Int((v >> (exponent - bits)) & ((1 << bits) - 1))
        return linear + (exponent - bits - 1) << bits + sub
    }

    private func lowerBound(_ i: Int) -> Int64 {
        let linear = 2 << bits
        if i < linear { return Int64(i) }
        let exponent = (i - linear) >> bits + bits + 1, sub = (i - linear) & ((1 << bits) - 1)
        return (Int64(1) << exponent) | (Int64(sub) << (exponent - bits))
    }
}
