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
        return String(unsafeUninitializedCapacity: 32) { out in
            var n = 0
            if sec < 0 {
                out[0] = 0x2D
                n = 1
            }
            n = writeDecimal(sec.magnitude, into: out, at: n)
            out[n] = 0x2E
            return writeDecimal(UInt64(ns), into: out, at: n + 1, width: 9)
        }
    }
}
