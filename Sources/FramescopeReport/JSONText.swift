import FramescopeCore

/// JSON text written at a pointer into room the caller has made (`JSONWriter.room`): each piece
/// returns where the next one goes, so a run of them keeps its position in a register instead of
/// checking and counting the writer's buffer per piece (a connection's line has a hundred pieces).
enum JSONText {
    /// Text that needs no escapes, at most 64 bytes: a key with its punctuation (`,"bytes":`).
    @inline(__always)
    static func raw(_ text: StaticString, at: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        let count = text.utf8CodeUnitCount
        precondition(text.hasPointerRepresentation && count <= 64)
        copyShort(from: text.utf8Start, to: at, count: count)
        return at + count
    }

    @inline(__always)
    static func byte(_ byte: UInt8, at: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        at[0] = byte
        return at + 1
    }

    /// At most 20 bytes.
    @inline(__always)
    static func natural(_ value: UInt64, at: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        if value < 10 {  // most counts of a connection's line: one store
            at[0] = 0x30 &+ UInt8(truncatingIfNeeded: value)
            return at + 1
        }
        let end = at + decimalDigits(value)  // the digits' count first, then pairs of them backwards from the table
        writeDigits(value, endingAt: end)
        return end
    }

    /// At most 21 bytes.
    @inline(__always)
    static func integer(_ value: Int64, at: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        guard value < 0 else { return natural(UInt64(value), at: at) }
        at[0] = 0x2D
        return natural(value.magnitude, at: at + 1)
    }

    /// `"text"` when its UTF-8 needs no escapes and has at most `limit` bytes (at most `limit` + 2
    /// written); else nil, for the writer's `string` to escape it.
    @inline(__always)
    static func plainString(_ text: String, limit: Int, at: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8>? {
        plainText(text, limit: limit, at: byte(0x22, at: at)).map { byte(0x22, at: $0) }
    }

    /// `text`'s UTF-8, unquoted, when it needs no escapes and has at most `limit` bytes; else nil.
    static func plainText(_ text: String, limit: Int, at: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8>? {
        var text = text
        return text.withUTF8 { utf8 in
            guard utf8.count <= limit, !needsEscape(utf8) else { return nil }
            if let source = utf8.baseAddress { copyShort(from: source, to: at, count: utf8.count) }
            return at + utf8.count
        }
    }

    /// `"e0 ad 1a"`: bytes in lower-case hex, separated by spaces, as `JSONWriter.hex` writes them
    /// (3 × count + 1 bytes at most).
    static func hexString(_ bytes: [UInt8], at: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        let end = writeHex(bytes, into: UnsafeMutableBufferPointer(start: at, count: 3 &* bytes.count &+ 1), at: 1)
        at[0] = 0x22
        at[end] = 0x22
        return at + (end &+ 1)
    }

    /// The most `scaled` writes.
    static let scaledRoom = 48

    /// `Double(units) / 10^scale` (e.g. nanoseconds as seconds) as `JSONWriter.double` writes it,
    /// digit by digit instead of through `Double.description` (a fifth of the time of listing
    /// 50,000 connections). The same text: below 10^15 units the value has at most 15
    /// significant digits, so its shortest round-trip form is those digits (`3.826e-06`,
    /// `0.001048576`, `12.5`; exponential below 1e-4, as Swift writes it). At most `scaledRoom` bytes.
    ///
    /// Inline for what a listing writes most, round trips and latencies below 100 µs in
    /// nanoseconds (`smallExponential`); the call and the general checks were half of writing one.
    @inline(__always)
    static func scaled(_ units: Int64, scale: Int, at start: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        if units > 0 && units < 100_000 && scale >= 9 && scale <= 18 { return smallExponential(UInt64(units), scale: scale, at: start) }
        return anyScaled(units, scale: scale, at: start)
    }

    /// `scaled` for 1 ≤ `units` < 10^5 and a `scale` of 9 to 18: always the exponential form
    /// (`d.ddde-XX`). The five digits are put together zero-padded in a register with two
    /// divisions and two table loads, the padding shifted out, and stored after the first digit
    /// and the point in one 8-byte store. (Written at fixed places and moved left through
    /// memory, the 8-byte load after the byte stores waited on them: a quarter of the samples
    /// of writing a direction's round trips.)
    @inline(__always)
    private static func smallExponential(_ units: UInt64, scale: Int, at text: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        let hundreds = units / 100, tenThousands = hundreds / 100
        let count = units < 100 ? (units < 10 ? 1 : 2) : (units < 1_000 ? 3 : (units < 10_000 ? 4 : 5))
        // Digit i of the five (the first the most significant) in byte i.
        var digits = (0x30 &+ tenThousands) | UInt64(pairText(Int(truncatingIfNeeded: hundreds &- tenThousands &* 100))) &<< 8
        digits |= UInt64(pairText(Int(truncatingIfNeeded: units &- hundreds &* 100))) &<< 24
        digits &>>= UInt64(truncatingIfNeeded: (5 &- count) &* 8)  // the first digit in byte 0
        text[0] = UInt8(truncatingIfNeeded: digits)
        UnsafeMutableRawPointer(text + 1).storeBytes(of: digits & ~0xFF | 0x2E, as: UInt64.self)  // the point, then digits 1...
        var last = count &- 1  // the last digit that is not a trailing 0 (0: none after the point)
        while last > 0 && (digits &>> UInt64(truncatingIfNeeded: last &* 8)) & 0xFF == 0x30 { last &-= 1 }
        let n = last > 0 ? last &+ 2 : 1
        text[n] = 0x65
        text[n &+ 1] = 0x2D
        writePair(scale &- count &+ 1, at: text + (n &+ 2))
        return text + (n &+ 4)
    }

    @inline(never)
    private static func anyScaled(_ units: Int64, scale: Int, at start: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        precondition((1...18).contains(scale))
        let magnitude = units.magnitude
        guard magnitude < 1_000_000_000_000_000 else { return shortest(Double(units) / Double(powerOfTen(scale)), at: start) }
        guard magnitude != 0 else { return byte(0x30, at: start) }
        var text = start
        if units < 0 {
            text[0] = 0x2D
            text += 1
        }
        // The digits are written once, where the text wants most of them, and the point put in
        // after (a division per trailing zero, a call and a copy cost twice as much: a
        // direction's round trips write six of these).
        let count = decimalDigits(magnitude), whole = count &- scale  // digits before the point (none when ≤ 0)
        var n: Int
        if count &+ 4 <= scale {  // below 1e-4: d.ddde-XX, as Swift writes it
            writeDigits(magnitude, endingAt: text + (count &+ 1))  // at 1...count; the first moves left of the point
            text[0] = text[1]
            var last = count
            while text[last] == 0x30 { last &-= 1 }  // (text[1], the first digit, is not 0)
            text[1] = 0x2E
            n = last > 1 ? last &+ 1 : 1
            let exponent = scale &- count &+ 1
            text[n] = 0x65
            text[n &+ 1] = 0x2D
            writePair(exponent, at: text + (n &+ 2))
            n &+= 4
        } else if whole > 0 {
            writeDigits(magnitude, endingAt: text + count)
            var last = count
            while last > whole && text[last &- 1] == 0x30 { last &-= 1 }
            n = whole  // a whole number when no fraction digit is left
            if last > whole {  // the fraction's digits one to the right, for the point
                var i = last
                while i > whole {
                    text[i] = text[i &- 1]
                    i &-= 1
                }
                text[whole] = 0x2E
                n = last &+ 1
            }
        } else {  // 0.000ddd
            text[0] = 0x30
            text[1] = 0x2E
            n = 2
            for _ in 0 ..< -whole {
                text[n] = 0x30
                n &+= 1
            }
            n &+= count
            writeDigits(magnitude, endingAt: text + n)
            while text[n &- 1] == 0x30 { n &-= 1 }
        }
        return text + n
    }

    /// A value of one decimal (a percentage or bits rounded to tenths, `k / 10`), as `shortest`
    /// writes it, without `Double.description`. At most `scaledRoom` bytes.
    static func tenths(_ value: Double, at: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        abs(value) < 1e14 ? scaled(Int64((value * 10).rounded()), scale: 1, at: at) : shortest(value, at: at)
    }

    /// `value` as `JSONWriter.double` writes it: whole numbers below 10^15 as integers, others as
    /// `Double.description` (at most 24 bytes).
    static func shortest(_ value: Double, at: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        if value == value.rounded() && abs(value) < 1e15 { return integer(Int64(value), at: at) }
        var text = String(value)
        return text.withUTF8 { utf8 in
            at.update(from: utf8.baseAddress!, count: utf8.count)
            return at + utf8.count
        }
    }
}

/// Whether JSON needs any of `utf8` escaped (a control character, `"` or `\\`), eight bytes at
/// a time (a byte at a time, the scan was most of writing an endpoint's string).
@inline(__always)
func needsEscape(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let base = utf8.baseAddress else { return false }
    let count = utf8.count
    guard count >= 8 else { return utf8.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C } }
    let ones: UInt64 = 0x0101_0101_0101_0101
    func flagged(_ word: UInt64) -> Bool {
        // A byte below 0x20, or one that XOR makes 0: the high bit of each such byte is left set.
        let quote = word ^ (0x22 &* ones), backslash = word ^ (0x5C &* ones)
        let below = (word &- 0x20 &* ones) & ~word, quotes = (quote &- ones) & ~quote, backslashes = (backslash &- ones) & ~backslash
        return (below | quotes | backslashes) & (0x80 &* ones) != 0
    }
    let raw = UnsafeRawPointer(base)
    var i = 0
    while i &+ 8 <= count {
        if flagged(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { return true }
        i &+= 8
    }
    return i < count && flagged(raw.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self))
}

/// `value`'s digits, the last at `end - 1`.
@inline(__always)
func writeDigits(_ value: UInt64, endingAt end: UnsafeMutablePointer<UInt8>) {
    var at = end, v = value
    while v >= 100 {
        let q = v / 100
        at -= 2
        writePair(Int(truncatingIfNeeded: v &- q &* 100), at: at)
        v = q
    }
    if v >= 10 {
        writePair(Int(truncatingIfNeeded: v), at: at - 2)
    } else {
        at[-1] = 0x30 &+ UInt8(truncatingIfNeeded: v)
    }
}

/// The two digits of `n` (0...99) at `at`: one load from a table and one store (dividing by 10
/// took a dozen instructions).
@inline(__always)
func writePair(_ n: Int, at: UnsafeMutablePointer<UInt8>) {
    UnsafeMutableRawPointer(at).storeBytes(of: pairText(n), as: UInt16.self)
}

/// The two digits of 0 ≤ `n` < 100, the first in the low byte.
@inline(__always)
func pairText(_ n: Int) -> UInt16 {
    UnsafeRawPointer(digitPairs.utf8Start).loadUnaligned(fromByteOffset: n &* 2, as: UInt16.self)
}

/// "00" to "99": the two digits of `n` at `2 n`. The report module's own, beside Core's
/// `writeDecimal` and its table: a build calling Core's digit writers (made inlinable) from here
/// listed varint-50k in 365.2 M instructions against 354.7 M (callgrind; it changed `epoch` too).
var digitPairs: StaticString {
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
}

/// Copies a few bytes (a key, an endpoint) with two overlapping loads and stores of the widest
/// size that fits: no loop over bytes, no call (a loop, vectorized with its run-time checks,
/// cost 60 instructions for an endpoint's 14 bytes).
@inline(__always)
func copyShort(from source: UnsafePointer<UInt8>, to target: UnsafeMutablePointer<UInt8>, count: Int) {
    let from = UnsafeRawPointer(source), to = UnsafeMutableRawPointer(target)
    func pair<T>(_: T.Type) {  // the first and the last `MemoryLayout<T>.size` bytes
        to.storeBytes(of: from.loadUnaligned(as: T.self), as: T.self)
        to.storeBytes(of: from.loadUnaligned(fromByteOffset: count &- MemoryLayout<T>.size, as: T.self), toByteOffset: count &- MemoryLayout<T>.size, as: T.self)
    }
    if count >= 16 {
        var i = 0
        while i &+ 32 < count {
            to.storeBytes(of: from.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self), toByteOffset: i, as: SIMD16<UInt8>.self)
            i &+= 16
        }
        if i &+ 16 < count {
            to.storeBytes(of: from.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self), toByteOffset: i, as: SIMD16<UInt8>.self)
        }
        let last = count &- 16
        to.storeBytes(of: from.loadUnaligned(fromByteOffset: last, as: SIMD16<UInt8>.self), toByteOffset: last, as: SIMD16<UInt8>.self)
    } else if count >= 8 {
        pair(UInt64.self)
    } else if count >= 4 {
        pair(UInt32.self)
    } else if count > 0 {
        target[0] = source[0]
        target[count >> 1] = source[count >> 1]
        target[count &- 1] = source[count &- 1]
    }
}

