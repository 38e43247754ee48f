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
        let frac = String(ns)
        return "\(sec)." + String(repeating: "0", count: 9 - frac.count) + frac
    }
}
