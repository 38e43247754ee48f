/// Writes `value` in decimal at `start`, padded with zeros to `width` digits; returns the index
/// after its last digit. For text written by the million (endpoints, epoch times, JSON numbers)
/// without a String in between; `out` must have room (20 digits at most, or `width`). Two digits
/// a step from a table, one division by 100 each (a division per digit, twice, was a sixth of
/// listing 50,000 connections).
public func writeDecimal(_ value: UInt64, into out: UnsafeMutableBufferPointer<UInt8>, at start: Int, width: Int = 1) -> Int {
    // Wrapping arithmetic: indices stay within `out`'s 20 digits (an overflow check per step
    // was a tenth of the function).
    let end = start &+ max(decimalDigits(value), width)
    let pairs = digitPairs.utf8Start
    var i = end, v = value
    while v >= 100 {
        let q = v / 100
        let r = Int(truncatingIfNeeded: v &- q &* 100) &* 2
        v = q
        i &-= 2
        out[i] = pairs[r]
        out[i &+ 1] = pairs[r &+ 1]
    }
    if v >= 10 {
        let r = Int(truncatingIfNeeded: v) &* 2
        i &-= 2
        out[i] = pairs[r]
        out[i &+ 1] = pairs[r &+ 1]
    } else {
        i &-= 1
        out[i] = 0x30 &+ UInt8(truncatingIfNeeded: v)
    }
    while i > start {
        i &-= 1
        out[i] = 0x30
    }
    return end
}

/// The number of decimal digits of `value` (1 for 0): a binary search over constants, four or
/// five compares (a loop, a multiplication per digit, took 45 instructions for an epoch's
/// seconds; a table needs a lazily made global and its bounds check).
@inlinable @inline(__always)  // (inlined into the report's writers too: a call per number written cost a fifth of it)
public func decimalDigits(_ value: UInt64) -> Int {
    if value < 100_000 {
        if value < 100 { return value < 10 ? 1 : 2 }
        if value < 10_000 { return value < 1_000 ? 3 : 4 }
        return 5
    }
    if value < 10_000_000_000 {
        if value < 10_000_000 { return value < 1_000_000 ? 6 : 7 }
        if value < 1_000_000_000 { return value < 100_000_000 ? 8 : 9 }
        return 10
    }
    if value < 1_000_000_000_000_000 {
        if value < 1_000_000_000_000 { return value < 100_000_000_000 ? 11 : 12 }
        if value < 100_000_000_000_000 { return value < 10_000_000_000_000 ? 13 : 14 }
        return 15
    }
    if value < 100_000_000_000_000_000 { return value < 10_000_000_000_000_000 ? 16 : 17 }
    return value < 10_000_000_000_000_000_000 ? (value < 1_000_000_000_000_000_000 ? 18 : 19) : 20
}

/// 10^n, for n in 0...19.
@inline(__always)
public func powerOfTen(_ n: Int) -> UInt64 { powersOfTen[n] }

private let powersOfTen: [UInt64] = (0..<20).reduce(into: []) { table, n in table.append(n == 0 ? 1 : table[n - 1] &* 10) }

/// A byte (an IPv4 address's octet) in decimal at `start`; returns the index after it.
@inline(__always)
func writeOctet(_ value: UInt8, into out: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
    let pairs = digitPairs.utf8Start
    if value >= 100 {
        let r = Int(value % 100) &* 2
        out[start] = 0x30 &+ value / 100
        out[start + 1] = pairs[r]
        out[start + 2] = pairs[r + 1]
        return start + 3
    }
    if value >= 10 {
        let r = Int(value) &* 2
        out[start] = pairs[r]
        out[start + 1] = pairs[r + 1]
        return start + 2
    }
    out[start] = 0x30 &+ value
    return start + 1
}

/// "00" to "99": the two digits of `n` at `2 n`.
private var digitPairs: StaticString {
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
}
