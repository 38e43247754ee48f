/// Partial messages, merged segments and malformed headers of one direction over time, in at
/// most `bucketCount` buckets from the first event on. When an event falls past the last bucket
/// the width doubles and neighbouring buckets merge, so memory stays fixed however long the
/// capture; nothing is allocated until the first event (most directions of a healthy capture
/// have none).
public struct EventTimeline: Sendable, Equatable {
    public static let bucketCount = 32
    /// Bucket widths are powers of two nanoseconds (shifts, not divisions, per event), from
    /// 2^20 ns (about 1 ms).
    static let initialShift: Int64 = 20

    public enum Kind: Int, Sendable, CaseIterable {
        case partial, merged, malformed
    }

    /// Start of the first bucket: the first event's time.
    public private(set) var origin = Timestamp.zero
    private var shift = Self.initialShift
    public var bucketNanoseconds: Int64 { 1 << shift }
    /// `Kind.allCases.count` counters per bucket, up to the last bucket used; empty until the
    /// first event.
    private var counts: [UInt32] = []

    public init() {}

    public var isEmpty: Bool { counts.isEmpty }

    /// Buckets up to the last one with an event, per kind.
    public func series(_ kind: Kind) -> [Int] {
        (0..<bucketsInUse).map { count(kind, inBucket: $0) }
    }

    /// Events in more than one bucket: a series worth reporting. Events all in the first bucket
    /// say no more than the direction's totals (and the first event's time to a millisecond):
    /// the reports leave such a timeline out (most timelines of a many-connection capture).
    public var spansBuckets: Bool { bucketsInUse > 1 }

    /// Buckets up to the last one with an event of any kind.
    public var bucketsInUse: Int {
        let stride = Kind.allCases.count
        var last = counts.count / stride - 1
        while last >= 0 && (0..<stride).allSatisfy({ counts[last * stride + $0] == 0 }) { last -= 1 }
        return last + 1
    }

    /// `series(kind)` without the array: `body` reads the counts `stride` apart from `start`
    /// (the kinds' counts are interleaved), `count` of them. A listing writes three series for each
    /// of thousands of directions.
    public func withSeries<R>(_ kind: Kind, _ body: (_ counts: UnsafeBufferPointer<UInt32>, _ start: Int, _ stride: Int, _ count: Int) -> R) -> R {
        let buckets = bucketsInUse
        return counts.withUnsafeBufferPointer { body($0, kind.rawValue, Kind.allCases.count, buckets) }
    }

    public func count(_ kind: Kind, inBucket bucket: Int) -> Int {
        Int(counts[bucket * Kind.allCases.count + kind.rawValue])
    }

    mutating func add(_ kind: Kind, at time: Timestamp) {
        let stride = Kind.allCases.count
        if counts.isEmpty { origin = time }
        let elapsed = max(0, time.nanoseconds - origin.nanoseconds)
        while elapsed >> shift >= Int64(Self.bucketCount) { doubleWidth() }
        let bucket = Int(elapsed >> shift)
        // Buckets up to the last one used: a direction whose events fall in its first
        // millisecond holds one, not 32 (50,000 connections carried 384 bytes each).
        if (bucket + 1) * stride > counts.count { counts.append(contentsOf: repeatElement(0, count: (bucket + 1) * stride - counts.count)) }
        counts[bucket * stride + kind.rawValue] &+= 1
    }

    /// Neighbouring buckets merge: bucket `b` becomes old `2b` and `2b + 1`.
    private mutating func doubleWidth() {
        let stride = Kind.allCases.count
        let used = counts.count / stride, merged = (used + 1) / 2
        for bucket in 0..<merged {
            for k in 0..<stride {
                let second = 2 * bucket + 1 < used ? counts[(2 * bucket + 1) * stride + k] : 0
                counts[bucket * stride + k] = counts[2 * bucket * stride + k] &+ second
            }
        }
        counts.removeLast((used - merged) * stride)
        shift += 1
    }
}
