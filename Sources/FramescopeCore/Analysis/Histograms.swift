/// Counts of small integers (segments per message, messages per segment): exact up to
/// `limit - 1`, the rest in the last bucket; the maximum is kept exactly.
public struct CountHistogram: Sendable, Equatable {
    public static let limit = 64
    public private(set) var buckets: [Int] = []
    public private(set) var maximum = 0
    public private(set) var total = 0

    public init() {}

    public mutating func add(_ value: Int) {
        let index = min(value, Self.limit - 1)
        if index >= buckets.count { buckets += [Int](repeating: 0, count: index + 1 - buckets.count) }
        buckets[index] += 1
        maximum = max(maximum, value)
        total += 1
    }

    /// `(value, count)` for every value seen; the last bucket stands for `limit - 1` and above.
    public var nonZero: [(value: Int, count: Int)] {
        buckets.indices.filter { buckets[$0] > 0 }.map { ($0, buckets[$0]) }
    }

    public mutating func merge(_ other: CountHistogram) {
        if other.buckets.count > buckets.count { buckets += [Int](repeating: 0, count: other.buckets.count - buckets.count) }
        for i in other.buckets.indices { buckets[i] += other.buckets[i] }
        maximum = max(maximum, other.maximum)
        total += other.total
    }
}

/// Quantiles of non-negative values in bounded memory: values below 128 exactly, above in
/// 64 log-linear sub-buckets per power of two (quantiles within 1/64 of the true value,
/// rounded down); minimum and maximum exact. Buckets grow only up to the largest value seen,
/// so a direction of small messages costs a few hundred bytes.
public struct QuantileHistogram: Sendable, Equatable {
    private static let linear = 128
    private static let subBuckets = 64
    private var buckets: [UInt32] = []
    public private(set) var count = 0
    public private(set) var minimum: Int64 = .max
    public private(set) var maximum: Int64 = 0
    public private(set) var sum: Int64 = 0

    public init() {}

    public mutating func add(_ value: Int64) {
        let v = max(0, value)
        let index = Self.bucket(v)
        if index >= buckets.count { buckets += [UInt32](repeating: 0, count: index + 1 - buckets.count) }
        buckets[index] &+= 1
        count += 1
        minimum = min(minimum, v)
        maximum = max(maximum, v)
        sum &+= v
    }

    public mutating func merge(_ other: QuantileHistogram) {
        guard other.count > 0 else { return }
        if other.buckets.count > buckets.count { buckets += [UInt32](repeating: 0, count: other.buckets.count - buckets.count) }
        for i in other.buckets.indices { buckets[i] &+= other.buckets[i] }
        count += other.count
        minimum = min(minimum, other.minimum)
        maximum = max(maximum, other.maximum)
        sum &+= other.sum
    }

    /// The value at quantile `q` (0...1), or 0 when empty.
    public func quantile(_ q: Double) -> Int64 {
        guard count > 0 else { return 0 }
        let rank = max(1, Int((q * Double(count)).rounded(.up)))
        var seen = 0
        for (i, n) in buckets.enumerated() where n > 0 {
            seen += Int(n)
            if seen >= rank { return min(max(Self.lowerBound(i), minimum), maximum) }
        }
        return maximum
    }

    private static func bucket(_ v: Int64) -> Int {
        if v < Int64(linear) { return Int(v) }
        let exponent = 63 - v.leadingZeroBitCount  // ≥ 7
        let sub = Int((v >> (exponent - 6)) & 63)
        return linear + (exponent - 7) * subBuckets + sub
    }

    private static func lowerBound(_ i: Int) -> Int64 {
        if i < linear { return Int64(i) }
        let exponent = (i - linear) / subBuckets + 7, sub = (i - linear) % subBuckets
        return (Int64(1) << exponent) | (Int64(sub) << (exponent - 6))
    }
}
