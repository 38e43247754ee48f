import FramescopeSynthetic
import Testing

@testable import FramescopeCore

/// What a malformed header looks like (`HeaderForensics`) and the SPEC next to a wrong one that
/// frames a stream cleanly (`SpecVariations`).
@Suite struct FramingForensicsTests {
    static func dissector(_ spec: String) -> AnyDissector { try! DissectorSpec(parsing: spec).makeDissector(isClient: true) }
    static func lengthField(_ spec: String) -> LengthFieldDissector {
        guard case .lengthField(let d) = try! DissectorSpec(parsing: spec).kind else { fatalError(spec) }
        return d
    }

    @Test func seed002HeaderInHostOrder() {
        // Seed 002: 0xff magic, size, commandId, written by one sender in host (little-endian) order.
        let header: [UInt8] = [0xFF, 0, 0, 0, 0x90, 0x05, 0, 0, 0x69, 0, 0, 0, 0x7B, 0x22, 0x73, 0x65]
        let said = HeaderForensics.describe(header, reason: .badMagic, dissector: Self.dissector("length:offset=4,width=4,magic=000000ff,type=8:4"))
        #expect(said?.hasPrefix("magic in little-endian byte order") == true, "\(said ?? "nil")")
        #expect(said?.hasSuffix("this sender wrote the header in host order") == true)
    }

    @Test func otherProtocols() {
        let varint = Self.dissector("length:offset=0,width=4")
        let cases: [([UInt8], String)] = [
            ([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC], "a TLS record (handshake, version 3.1)"),
            (Array("GET /index.html HTTP/1.1\r\n".utf8), "an HTTP request"),
            (Array("HTTP/1.1 200 OK\r\n".utf8), "an HTTP response"),
            (Array("{\"type\":\"chat\",\"id\":7}".utf8), "JSON text"),
            (Array("hello, this is text".utf8), "printable text"),
        ]
        for (bytes, expected) in cases {
            let said = HeaderForensics.describe(bytes, reason: .lengthTooLarge, dissector: varint)
            #expect(said?.hasPrefix(expected) == true, "\(said ?? "nil")")
        }
        // TLS framing that fails on a record is not told it sees TLS.
        #expect(HeaderForensics.describe([0x16, 0x03, 0x01, 0xFF, 0xFF, 0x01], reason: .lengthTooLarge, dissector: Self.dissector("preset:tls")) == nil)
        // Random-looking binary says nothing; text is no surprise where lengths are digits.
        #expect(HeaderForensics.describe([0x00, 0x9A, 0x31, 0xC4, 0x07, 0xEE], reason: .lengthTooLarge, dissector: varint) == nil)
        #expect(HeaderForensics.describe(Array("hello, this is text".utf8), reason: .nonDigitLength, dissector: Self.dissector("length:offset=0,width=4,encoding=ascii")) == nil)
    }

    @Test func magicFurtherOnAndLengthInTheOtherByteOrder() {
        let magic = Self.dissector("length:offset=2,width=2,magic=cafe")
        let shifted: [UInt8] = [0x00, 0x07, 0x00, 0xCA, 0xFE, 0x00, 0x04]
        #expect(HeaderForensics.describe(shifted, reason: .badMagic, dissector: magic)?.hasPrefix("the magic appears 3 bytes further on") == true)
        let big = Self.dissector("length:offset=0,width=4,max=65536")
        let littleLength: [UInt8] = [0x10, 0x01, 0x00, 0x00, 0x41]
        #expect(HeaderForensics.describe(littleLength, reason: .lengthTooLarge, dissector: big)?.hasPrefix("the length field reads 272 in little-endian byte order") == true)
    }

    /// `count` messages of `header` bytes (a 4-byte type, a 4-byte length) and a body, written one
    /// per segment but every third two to a segment: the stream and its segment starts.
    static func stream(count: Int, length: (Int, Int) -> [UInt8]) -> (bytes: [UInt8], starts: [Int]) {
        var bytes: [UInt8] = [], starts: [Int] = []
        for i in 0..<count {
            if i % 3 != 2 { starts.append(bytes.count) }
            let body = pattern(i, 20 + i * 37 % 300)
            bytes += [0, 0, 0, UInt8(i % 5)] + length(body.count, 8) + body
        }
        return (bytes, starts)
    }

    static func bigEndian(_ n: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: n >> (8 * (3 - $0))) } }

    @Test func suggestsTheVariationThatFramesCleanly() {
        let spec = Self.lengthField("length:offset=4,width=4")
        // The sender's length counts the header.
        let counting = Self.stream(count: 60) { body, header in Self.bigEndian(body + header) }
        let s = SpecVariations.suggest(spec, sample: counting.bytes, segmentStarts: counting.starts, whole: true)
        #expect(s?.change == "adjust=-8" && s?.meaning == "the length counts the header" && s?.messages == 60, "\(String(describing: s))")
        #expect(s?.spec == "length:offset=4,width=4,adjust=-8")
        // The sender's length is little-endian.
        let little = Self.stream(count: 60) { body, _ in Self.bigEndian(body).reversed() }
        let e = SpecVariations.suggest(spec, sample: little.bytes, segmentStarts: little.starts, whole: true)
        #expect(e?.change == "endian=little" && e?.messages == 60, "\(String(describing: e))")
        // Framing that is right needs no suggestion.
        let right = Self.stream(count: 60) { body, _ in Self.bigEndian(body) }
        #expect(SpecVariations.suggest(spec, sample: right.bytes, segmentStarts: right.starts, whole: true) == nil)
    }

    /// A short length walks cleanly through anything; without frame starts on segment starts no
    /// variation is suggested.
    @Test func noSuggestionForBytesThatAreNoFraming() {
        var state: UInt64 = 7
        for spec in ["varint", "length:offset=0,width=1", "length:offset=0,width=2", "length:offset=4,width=4"] {
            for _ in 0..<200 {
                let bytes = (0..<4096).map { _ -> UInt8 in
                    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    return UInt8(truncatingIfNeeded: state >> 33)
                }
                let starts = stride(from: 0, to: bytes.count, by: 512).map { $0 }
                #expect(SpecVariations.suggest(Self.lengthField(spec), sample: bytes, segmentStarts: starts, whole: true) == nil, "\(spec)")
            }
        }
    }

    /// A delimiter's SPEC text parses back to the same bytes: printable ones as text, `0x`/`0X`
    /// starts (which read as hex), escapes and control bytes as hex; and every 1–4 byte delimiter
    /// of random printable and other bytes. (The fuzzer found inference naming `delimiter:0X}}`.)
    @Test func delimiterSpecTextRoundTrips() throws {
        var delimiters: [[UInt8]] = [[0x30, 0x58, 0x7D, 0x7D], [0x30, 0x78, 0x41], [0x30, 0x58], [0x7C], [0x3B, 0x3B], [0x5C, 0x6E], [0x2C], [0x3D, 0x3D], [0x0D], [0xFF, 0x00]]
        var random = SplitMix64(seed: 3)
        for _ in 0..<20_000 {
            let alphabet: [UInt8] = [0x30, 0x58, 0x78, 0x5C, 0x2C, 0x3D, 0x3A, 0x40, 0x20, 0x7E, 0x00, 0x0A, 0xFF]
            delimiters.append((0...Int(random.next() % 4)).map { _ in
                random.next() % 2 == 0 ? alphabet[Int(random.next() % UInt64(alphabet.count))] : UInt8(truncatingIfNeeded: random.next())
            })
        }
        for delimiter in delimiters {
            let text = DelimiterDissector.specText(delimiter)
            guard case .delimiter(let back) = try DissectorSpec(parsing: text).kind else {
                Issue.record("\(text) is not a delimiter")
                continue
            }
            #expect(back.delimiter.array == delimiter, "\(delimiter) → \(text)")
        }
    }

    /// `specText` parses back to the same dissector, for every preset with a length field.
    @Test func specTextRoundTrips() throws {
        let extra = ["length:offset=6,width=4,encoding=ascii,adjust=-3,min=10,max=4096", "length:offset=0,width=2,endian=little,body=6"]
        for text in DissectorSpec.presets.keys.sorted().map({ "preset:\($0)" }) + extra {
            guard case .lengthField(let d) = try DissectorSpec(parsing: text).kind else { continue }
            guard case .lengthField(let back) = try DissectorSpec(parsing: d.specText).kind else { Issue.record("\(text)"); continue }
            #expect(back == d, "\(text) → \(d.specText)")
        }
    }
}
