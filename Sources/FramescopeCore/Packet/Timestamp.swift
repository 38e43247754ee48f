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
    /// ISO 8601 in UTC to the millisecond, `2023-11-14T22:13:20.000Z`: what a person reads.
    public var isoString: String { isoString(offsetSeconds: nil) }

    /// ISO 8601 to the millisecond in local time `offsetSeconds` east of UTC, with the offset:
    /// `2023-11-14T23:13:20.000+01:00`; nil: UTC, `…Z`.
    public func isoString(offsetSeconds: Int?) -> String {
        let (seconds, nanoseconds) = (self.nanoseconds &+ Int64(offsetSeconds ?? 0) &* 1_000_000_000).quotientAndRemainder(dividingBy: 1_000_000_000)
        let total = nanoseconds < 0 ? seconds - 1 : seconds
        let millis = (nanoseconds < 0 ? nanoseconds + 1_000_000_000 : nanoseconds) / 1_000_000
        let (days, secondOfDay) = total.quotientAndRemainder(dividingBy: 86_400)
        let (day, second) = secondOfDay < 0 ? (days - 1, secondOfDay + 86_400) : (days, secondOfDay)
        // Days since 1970-01-01 to a civil date (Howard Hinnant's days_from_civil, inverted).
        let z = day + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let dayOfMonth = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        // Written digit by digit, as epochString is (a year before 0 gets its sign).
        let offset = offsetSeconds.map { (sign: $0 < 0 ? UInt8(0x2D) : 0x2B, minutes: UInt64($0.magnitude / 60)) }
        return String(unsafeUninitializedCapacity: 40) { out in
            var n = 0
            if year < 0 {
                out[0] = 0x2D
                n = 1
            }
            for (value, width, separator) in [
                (year.magnitude, 4, 0x2D), (UInt64(month), 2, 0x2D), (UInt64(dayOfMonth), 2, 0x54), (UInt64(second / 3600), 2, 0x3A),
                (UInt64(second / 60 % 60), 2, 0x3A), (UInt64(second % 60), 2, 0x2E), (UInt64(millis), 3, offset?.sign ?? 0x5A),
            ] as [(UInt64, Int, UInt8)] {
                n = writeDecimal(value, into: out, at: n, width: width)
                out[n] = separator
                n += 1
            }
            if let offset {
                n = writeDecimal(offset.minutes / 60, into: out, at: n, width: 2)
                out[n] = 0x3A
                n = writeDecimal(offset.minutes % 60, into: out, at: n + 1, width: 2)
            }
            return n
        }
    }

    public var epochString: String {
        String(unsafeUninitializedCapacity: 32) { writeEpoch(into: $0, at: 0) }
    }

    /// The time `epochString` wrote (`seconds.nanoseconds`, nine digits, a sign before
    /// negative seconds); nil for other text.
    public init?(epochText text: String) {
        var utf8 = Substring(text).utf8[...]
        let negative = utf8.first == 0x2D
        if negative { utf8 = utf8.dropFirst() }
        guard let point = utf8.firstIndex(of: 0x2E) else { return nil }
        let (whole, fraction) = (utf8[..<point], utf8[utf8.index(after: point)...])
        guard (1...11).contains(whole.count), fraction.count == 9, [whole, fraction].allSatisfy({ $0.allSatisfy { (0x30...0x39).contains($0) } }) else { return nil }
        func value(_ digits: Substring.UTF8View.SubSequence) -> UInt64 { digits.reduce(0) { $0 * 10 + UInt64($1 - 0x30) } }
        let (seconds, nanoseconds) = (value(whole), value(fraction))
        // A negative time is written as the whole seconds below it and the nanoseconds after
        // them: its magnitude is the seconds less the nanoseconds. Past Int64's range is no time.
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if negative {
            guard !overflow, seconds > 0, scaled - nanoseconds <= UInt64(1) << 63 else { return nil }
            self.init(nanoseconds: Int64(bitPattern: 0 &- (scaled &- nanoseconds)))
        } else {
            guard !overflow, scaled <= UInt64(Int64.max) - nanoseconds else { return nil }
            self.init(nanoseconds: Int64(scaled + nanoseconds))
        }
    }

    /// Writes `epochString` at `start` (room for 32 bytes); returns the index after it.
    public func writeEpoch(into out: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        let s = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        var sec = s.quotient, ns = s.remainder
        if ns < 0 { sec -= 1; ns += 1_000_000_000 }
        var n = start
        if sec < 0 {
            out[n] = 0x2D
            n += 1
        }
        n = writeDecimal(sec.magnitude, into: out, at: n)
        out[n] = 0x2E
        return writeDecimal(UInt64(ns), into: out, at: n + 1, width: 9)
    }
}
