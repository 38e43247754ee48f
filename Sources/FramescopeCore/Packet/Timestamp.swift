/// A capture timestamp in nanoseconds since the Unix epoch.
public struct Timestamp: Hashable, Comparable, Sendable {
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    public init(seconds: Int64, nanoseconds: Int64) {
        self.nanoseconds = seconds &* 1_000_000_000 &+ nanoseconds
    }

    public static let zero = Timestamp(nanoseconds: 0)

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.nanoseconds < b.nanoseconds }

    /// `seconds.nanoseconds`, nine digits, as tshark prints `frame.time_epoch`.
    public var epochString: String {
        let s = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        var sec = s.quotient, ns = s.remainder
        if ns < 0 { sec -= 1; ns += 1_000_000_000 }
        guard sec >= 0 else {
            let frac = String(ns)
            return "\(sec)." + String(repeating: "0", count: 9 - frac.count) + frac
        }
        return String(unsafeUninitializedCapacity: 30) { out in
            var n = writeDecimal(UInt64(sec), into: out, at: 0)
            out[n] = 0x2E
            n += 1
            var fraction = ns
            for i in stride(from: n + 8, through: n, by: -1) {
                out[i] = 0x30 + UInt8(fraction % 10)
                fraction /= 10
            }
            return n + 9
        }
    }
}
