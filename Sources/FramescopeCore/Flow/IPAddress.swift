/// An IPv4 or IPv6 address in 128 fixed-width bits; IPv4 is stored IPv4-mapped (`::ffff:a.b.c.d`).
/// Fixed-width storage keeps flow keys cheap to hash and free of allocations.
public struct IPAddress: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var high: UInt64
    public var low: UInt64
    /// Set for addresses that came from an IPv4 header (an IPv6 packet may carry a mapped address too).
    public var isIPv4: Bool

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
        self.isIPv4 = false
    }

    public init(ipv4: UInt32) {
        self.high = 0
        self.low = 0x0000_FFFF_0000_0000 | UInt64(ipv4)
        self.isIPv4 = true
    }

    public var ipv4: UInt32 { UInt32(truncatingIfNeeded: low) }

    public static func < (a: IPAddress, b: IPAddress) -> Bool {
        (a.isIPv4 ? 0 : 1, a.high, a.low) < (b.isIPv4 ? 0 : 1, b.high, b.low)
    }

    public var description: String {
        String(unsafeUninitializedCapacity: Self.maxTextLength) { write(into: $0, at: 0) }
    }

    /// The longest `description`: eight groups of four hex digits and seven colons.
    public static let maxTextLength = 39

    /// Writes `description` at `start` (room for `maxTextLength` bytes); returns the index after
    /// it. Digit by digit, without a String: a report of 50,000 IPv6 connections writes 100,000
    /// of these (built as Strings, they were a fifth of its run at `-t 2`, 6,000 instructions
    /// an endpoint).
    @inline(__always)
    public func write(into out: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        isIPv4 ? writeDottedQuad(ipv4, into: out, at: start) : writeIPv6(into: out, at: start)
    }

    /// RFC 5952 text: lower-case hex, the longest run (≥ 2; the first of equal ones) of zero
    /// groups as `::`, a mapped IPv4 address as `::ffff:` and its dotted quad.
    private func writeIPv6(into out: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        func group(_ i: Int) -> UInt16 { UInt16(truncatingIfNeeded: (i < 4 ? high : low) >> (48 &- 16 &* UInt64(i & 3))) }
        var bestStart = -1, bestLength = 0, runStart = -1
        for i in 0...8 {
            if i < 8 && group(i) == 0 {
                if runStart < 0 { runStart = i }
            } else if runStart >= 0 {
                if i - runStart > bestLength { (bestStart, bestLength) = (runStart, i - runStart) }
                runStart = -1
            }
        }
        if bestLength < 2 { bestStart = -1 }
        var n = start
        func colon() {
            out[n] = 0x3A
            n += 1
        }
        if bestStart == 0 && bestLength == 5 && group(5) == 0xFFFF {
            for byte in "::ffff:".utf8 {
                out[n] = byte
                n += 1
            }
            return writeDottedQuad(ipv4, into: out, at: n)
        }
        var i = 0
        while i < 8 {
            if i == bestStart {
                colon()
                colon()
                i += bestLength
                continue
            }
            if n > start && out[n - 1] != 0x3A { colon() }
            let value = group(i)
            var shift = max(0, (15 - value.leadingZeroBitCount) & ~3)  // the first digit's (no leading zeros)
            while shift >= 0 {
                out[n] = lowerHexDigits.utf8Start[Int(truncatingIfNeeded: value >> UInt16(shift) & 0xF)]
                n += 1
                shift -= 4
            }
            i += 1
        }
        return n
    }
}

/// The sixteen digits, lower-case, as RFC 5952 writes an address (`hexDigits(_:)` writes bytes as Strings).
private var lowerHexDigits: StaticString { "0123456789abcdef" }

/// `a.b.c.d` at `start`; returns the index after it.
@inline(__always)
private func writeDottedQuad(_ v: UInt32, into out: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
    var n = writeOctet(UInt8(truncatingIfNeeded: v >> 24), into: out, at: start)
    out[n] = 0x2E  // '.'
    n = writeOctet(UInt8(truncatingIfNeeded: v >> 16), into: out, at: n + 1)
    out[n] = 0x2E
    n = writeOctet(UInt8(truncatingIfNeeded: v >> 8), into: out, at: n + 1)
    out[n] = 0x2E
    return writeOctet(UInt8(truncatingIfNeeded: v), into: out, at: n + 1)
}

/// An address and a TCP port.
public struct Endpoint: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var address: IPAddress
    public var port: UInt16

    public init(address: IPAddress, port: UInt16) {
        self.address = address
        self.port = port
    }

    public static func < (a: Endpoint, b: Endpoint) -> Bool {
        (a.address, a.port) < (b.address, b.port)
    }

    /// `ip:port`, IPv6 as `[addr]:port` (tshark's and the corpus truth's notation).
    public var description: String {
        String(unsafeUninitializedCapacity: Self.maxTextLength) { write(into: $0, at: 0) }
    }

    /// The longest `description`: `[` an IPv6 address `]:` a port.
    public static let maxTextLength = 64

    /// Writes `description` at `start` (room for `maxTextLength` bytes); returns the index after
    /// it, digit by digit (`IPAddress.write`).
    public func write(into out: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        var n = start
        if !address.isIPv4 {
            out[n] = 0x5B  // '['
            n = address.write(into: out, at: n + 1)
            out[n] = 0x5D  // ']'
            n += 1
        } else {
            n = address.write(into: out, at: n)
        }
        out[n] = 0x3A  // ':'
        return writeDecimal(UInt64(port), into: out, at: n + 1)
    }
}
