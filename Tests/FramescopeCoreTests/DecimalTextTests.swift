@testable import FramescopeCore
import FramescopeSynthetic
import Testing

/// Epoch times and endpoints written digit by digit (`writeDecimal`) read as Swift's own
/// formatting would have them.
@Suite struct DecimalTextTests {
    @Test func epochTimesHaveNineFractionDigitsAndASignWhenNegative() {
        #expect(Timestamp(nanoseconds: 1_700_000_000_000_000_123).epochString == "1700000000.000000123")
        #expect(Timestamp(nanoseconds: 0).epochString == "0.000000000")
        #expect(Timestamp(nanoseconds: -1).epochString == "-1.999999999")
        #expect(Timestamp(nanoseconds: -2_500_000_000).epochString == "-3.500000000")
        #expect(Timestamp(nanoseconds: .max).epochString == "9223372036.854775807")
    }

    /// What a report's `time` says reads back as the time (`merge` reads events' times so).
    @Test func epochTextReadsBackAsTheTimestamp() {
        var rng = SplitMix64(seed: 3)
        let edges: [Int64] = [0, 1, -1, 999_999_999, 1_000_000_000, -1_000_000_000, -2_500_000_000, 1_700_000_000_000_000_123, .max, .min, .min + 1]
        for nanoseconds in edges + (0..<10_000).map({ _ in Int64(bitPattern: rng.next()) / Int64(1 + rng.next() % 1_000) }) {
            #expect(Timestamp(epochText: Timestamp(nanoseconds: nanoseconds).epochString) == Timestamp(nanoseconds: nanoseconds))
        }
        // Not nine fraction digits, not digits, no seconds, or past Int64's nanoseconds either way.
        for text in [
            "", "1", "1.5", "1.0000000000", ".000000001", "-.000000001", "-0.500000000", "1.00000000x", "+1.000000000", "1 .000000000",
            "9223372036.854775808", "-9223372037.145224191", "99999999999.000000000", "999999999999.000000000",
        ] {
            #expect(Timestamp(epochText: text) == nil, "\(text)")
        }
    }

    @Test func endpointsReadAsDottedQuadsAndBracketedIPv6() {
        #expect(Endpoint(address: IPAddress(ipv4: 0x0A00_0001), port: 9000).description == "10.0.0.1:9000")
        #expect(Endpoint(address: IPAddress(ipv4: 0xFFFF_FFFF), port: 65535).description == "255.255.255.255:65535")
        #expect(Endpoint(address: IPAddress(ipv4: 0), port: 0).description == "0.0.0.0:0")
        #expect(Endpoint(address: IPAddress(high: 0, low: 1), port: 80).description == "[::1]:80")
        // Every octet value in every place (one, two and three digits), ports of every width.
        for b in 0...255 {
            let (c, d) = (255 - b, (b * 7) % 256)
            let endpoint = Endpoint(address: IPAddress(ipv4: UInt32(b) << 24 | UInt32(c) << 16 | UInt32(d) << 8 | UInt32(b)), port: UInt16(b * 257))
            #expect(endpoint.description == "\(b).\(c).\(d).\(b):\(b * 257)")
        }
    }

    /// IPv6 text written in place reads as the String-built RFC 5952 text it replaced (below):
    /// every run of zero groups in every place, mapped IPv4 addresses, groups of every width.
    @Test func ipv6TextIsRFC5952() {
        #expect(IPAddress(high: 0, low: 0).description == "::")
        #expect(IPAddress(high: 0x2001_0DB8_0000_0000, low: 0x0000_0000_0A01_0000).description == "2001:db8::a01:0")
        #expect(IPAddress(high: 0, low: 0x0000_FFFF_C0A8_0001).description == "::ffff:192.168.0.1")
        #expect(IPAddress(high: 0xFFFF_FFFF_FFFF_FFFF, low: 0xFFFF_FFFF_FFFF_FFFF).description.count == IPAddress.maxTextLength)
        var rng = SplitMix64(seed: 7)
        let values: [UInt16] = [0, 0, 0, 1, 0xF, 0x10, 0xFF, 0x100, 0xFFF, 0x1000, 0xFFFF]
        for _ in 0..<20_000 {
            let groups = (0..<8).map { _ in rng.next() % 3 == 0 ? UInt16(truncatingIfNeeded: rng.next()) : values[Int(rng.next() % UInt64(values.count))] }
            let high = groups[0..<4].reduce(UInt64(0)) { $0 << 16 | UInt64($1) }, low = groups[4..<8].reduce(UInt64(0)) { $0 << 16 | UInt64($1) }
            let address = IPAddress(high: high, low: low)
            #expect(address.description == stringBuiltRFC5952(groups), "\(groups)")
            #expect(Endpoint(address: address, port: 443).description == "[\(stringBuiltRFC5952(groups))]:443")
        }
    }

    /// The text as `IPAddress.description` built it before it was written in place.
    private func stringBuiltRFC5952(_ groups: [UInt16]) -> String {
        var bestStart = -1, bestLength = 0, runStart = -1
        for i in 0...8 {
            if i < 8 && groups[i] == 0 {
                if runStart < 0 { runStart = i }
            } else if runStart >= 0 {
                if i - runStart > bestLength { bestStart = runStart; bestLength = i - runStart }
                runStart = -1
            }
        }
        if bestLength < 2 { bestStart = -1 }
        if bestStart == 0 && bestLength == 5 && groups[5] == 0xFFFF {
            return "::ffff:\(groups[6] >> 8).\(groups[6] & 0xFF).\(groups[7] >> 8).\(groups[7] & 0xFF)"
        }
        var text = ""
        var i = 0
        while i < 8 {
            if i == bestStart {
                text += "::"
                i += bestLength
                continue
            }
            if !text.isEmpty && !text.hasSuffix(":") { text += ":" }
            text += String(groups[i], radix: 16)
            i += 1
        }
        return text
    }

    @Test func zeroPaddingToAWidth() {
        var bytes = [UInt8](repeating: 0, count: 32)
        let end = bytes.withUnsafeMutableBufferPointer { writeDecimal(42, into: $0, at: 3, width: 5) }
        #expect(end == 8 && String(decoding: bytes[3..<8], as: UTF8.self) == "00042")
        let wide = bytes.withUnsafeMutableBufferPointer { writeDecimal(UInt64.max, into: $0, at: 0) }
        #expect(String(decoding: bytes[0..<wide], as: UTF8.self) == String(UInt64.max))
    }

    /// Every digit count and power-of-ten edge, and random values, read as `String(value)` does,
    /// padded or not.
    @Test func decimalsReadAsSwiftWritesThem() {
        var values: [UInt64] = [0, 1, 9, 10, 11, 99, 100, 101, 255, 999, 1000, UInt64.max, UInt64.max - 1]
        var power: UInt64 = 1
        for _ in 0..<19 {
            power *= 10
            values += [power - 1, power, power + 1]
        }
        var random = SplitMix64(seed: 42)
        for _ in 0..<10_000 { values.append(random.next() >> (random.next() % 64)) }
        var bytes = [UInt8](repeating: 0, count: 48)
        for value in values {
            for width in [1, 2, 5, 20, 24] {
                let end = bytes.withUnsafeMutableBufferPointer { writeDecimal(value, into: $0, at: 3, width: width) }
                let plain = String(value)
                let expected = String(repeating: "0", count: max(0, width - plain.count)) + plain
                #expect(String(decoding: bytes[3..<end], as: UTF8.self) == expected, "\(value) width \(width)")
            }
        }
    }

    /// Human times: ISO 8601 UTC with the date, checked against dates whose epoch is known
    /// (`date -u -d @SECONDS`), leap days and times before 1970 included.
    @Test func isoTimesCarryTheDate() {
        func iso(_ seconds: Int64, _ nanoseconds: Int64 = 0) -> String { Timestamp(nanoseconds: seconds * 1_000_000_000 + nanoseconds).isoString }
        #expect(iso(0) == "1970-01-01T00:00:00.000Z")
        #expect(iso(1_700_000_000, 17_928_463) == "2023-11-14T22:13:20.017Z")
        #expect(iso(1_709_164_800) == "2024-02-29T00:00:00.000Z")
        #expect(iso(951_782_400) == "2000-02-29T00:00:00.000Z")
        #expect(iso(951_868_800) == "2000-03-01T00:00:00.000Z")
        #expect(iso(4_102_444_799, 999_999_999) == "2099-12-31T23:59:59.999Z")
        #expect(Timestamp(nanoseconds: -1).isoString == "1969-12-31T23:59:59.999Z")
        #expect(iso(-86_400 * 365) == "1969-01-01T00:00:00.000Z")
    }

    /// Local times carry their offset: across midnight and the year either way, half hours,
    /// and "+00:00" (a zone's own UTC, not "Z"). Checked against `TZ=… date -d @SECONDS --iso-8601=seconds`.
    @Test func localTimesCarryTheirOffset() {
        func iso(_ seconds: Int64, _ offset: Int) -> String { Timestamp(nanoseconds: seconds * 1_000_000_000 + 250_000_000).isoString(offsetSeconds: offset) }
        #expect(iso(1_700_000_000, 8 * 3600) == "2023-11-15T06:13:20.250+08:00")
        #expect(iso(1_700_000_000, -5 * 3600) == "2023-11-14T17:13:20.250-05:00")
        #expect(iso(1_704_067_199, 5 * 3600 + 1800) == "2024-01-01T05:29:59.250+05:30")
        #expect(iso(1_704_067_200, -(3 * 3600 + 1800)) == "2023-12-31T20:30:00.250-03:30")
        #expect(iso(1_700_000_000, 0) == "2023-11-14T22:13:20.250+00:00")
        #expect(Timestamp(nanoseconds: 1_700_000_000_250_000_000).isoString(offsetSeconds: nil) == "2023-11-14T22:13:20.250Z")
    }
}
