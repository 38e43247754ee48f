import Foundation
import FramescopeCore
@testable import FramescopeReport
import FramescopeSynthetic
import Testing

/// The JSON writer's digit-by-digit forms against what they stand in for.
@Suite struct JSONWriterTests {
    /// What `body` writes, as text (one compact value).
    func written(layout: JSONWriter.Layout = .lines, _ body: (inout JSONWriter) -> Void) throws -> String {
        let path = NSTemporaryDirectory() + "framescope-json-\(UUID().uuidString)"
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0o600)
        try #require(fd >= 0)
        defer {
            close(fd)
            unlink(path)
        }
        var w = JSONWriter(fd: fd, layout: layout)
        body(&w)
        w.flush()
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    /// A connection's end is written from a literal: the same text as its raw value.
    @Test func connectionEndLiteralsAreTheirRawValues() throws {
        for end in [ConnectionEnd.fin, .halfClosed, .rst, .open] {
            #expect(end.literal.description == end.rawValue)
            #expect(try written { $0.raw(end.literal) } == end.rawValue)
        }
    }

    /// A split cause's key in a connection's line is its name's: `"mss":`.
    @Test func splitCauseKeysAreTheirNames() {
        for cause in SplitCause.allCases { #expect(cause.jsonKey.description == "\"\(cause.description)\":") }
    }

    /// Bytes in hex and a string with a number after it are written as the Strings they stand in
    /// for would be: escaped where the text needs it.
    @Test func hexAndAStringWithANumberReadAsTheirStrings() throws {
        for bytes in [[], [0], [0xAB], Array(0...31), (0...15).map { UInt8($0 * 17) }] as [[UInt8]] {
            #expect(try written { $0.hex(bytes) } == written { $0.string(hex(bytes)) })
        }
        for (text, number) in [("tcp.stream == 7", 42), ("a \"quoted\" \\ filter\n", 0), ("", UInt64.max)] as [(String, UInt64)] {
            #expect(try written { $0.string(text, then: " && frame.number == ", number) } == written { $0.string("\(text) && frame.number == \(number)") })
        }
    }

    /// Endpoints, written digit by digit into the buffer, read as their `description` strings:
    /// the shortest and longest IPv4 and IPv6 texts, beside other output and at the buffer's end.
    @Test func endpointsReadAsTheirStrings() throws {
        let v6 = IPAddress(high: 0xFFFF_FFFF_FFFF_FFFF, low: 0xFFFF_FFFF_FFFF_FFFF)
        let endpoints = [
            Endpoint(address: IPAddress(ipv4: 0), port: 0), Endpoint(address: IPAddress(ipv4: 0xFFFF_FFFF), port: 65535),
            Endpoint(address: IPAddress(ipv4: 0x0A01_0203), port: 9000), Endpoint(address: v6, port: 65535),
            Endpoint(address: IPAddress(high: 0, low: 1), port: 443),
        ]
        for endpoint in endpoints {
            for filler in [0, 1, 65_400, 65_470, 65_500, 65_530, 65_533, 65_534, 65_535, 70_000] {
                let text = String(repeating: "a", count: filler)
                let expected = try written { w in w.array { w in w.member { $0.string(text) }; w.member { $0.string(endpoint.description) } } }
                #expect(try written { w in w.array { w in w.member { $0.string(text) }; w.member { $0.endpoint(endpoint) } } } == expected, "\(endpoint) after \(filler)")
            }
        }
    }

    /// Endpoints written one after another by one writer, which keeps the texts of the last two:
    /// each reads as its `description` however they repeat, alternate or return (a client and a
    /// server per line, a third one between them, IPv4 and IPv6), and near the end of the buffer.
    @Test func keptEndpointsReadAsTheirStrings() throws {
        let server = Endpoint(address: IPAddress(ipv4: 0x0A00_0001), port: 9000)
        let v6 = Endpoint(address: IPAddress(high: 0x2001_0DB8_0000_0000, low: 1), port: 443)
        var sequence: [Endpoint] = []
        for i in 0..<300 { sequence += [Endpoint(address: IPAddress(ipv4: 0x0A01_0000 + UInt32(i / 7)), port: UInt16(10_000 + i % 3)), server] }
        sequence += [server, server, v6, server, v6, v6, Endpoint(address: IPAddress(ipv4: 0), port: 0), v6, server]
        for padding in [0, 65_536 - 500] {
            let filler = String(repeating: "x", count: padding)
            let fast = try written { w in w.array { w in w.member { $0.string(filler) }; for e in sequence { w.member { $0.endpoint(e) } } } }
            let slow = try written { w in w.array { w in w.member { $0.string(filler) }; for e in sequence { w.member { $0.string(e.description) } } } }
            #expect(fast == slow)
        }
    }

    /// Epoch times read as their `epochString`s: seconds repeated (the kept digits), changed,
    /// negative, zero, the extremes, and near the end of the buffer.
    @Test func epochTimesReadAsTheirStrings() throws {
        let edges: [Int64] = [
            1_700_000_000_000_000_000, 1_700_000_000_000_000_001, 1_700_000_000_999_999_999, 1_700_000_001_000_000_000, 0, 1, -1, -1_000_000_000,
            -1_000_000_001, 999_999_999, .max, .min, 1_700_000_001_500_000_000,
        ]
        var times = edges.map { Timestamp(nanoseconds: $0) }
        var state: UInt64 = 9  // a linear congruential sequence: the same times every run
        for _ in 0..<2_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            times.append(Timestamp(nanoseconds: 1_700_000_000_000_000_000 + Int64((state >> 20) % 5_000_000_000)))
        }
        for padding in [0, 65_536 - 30] {
            let filler = String(repeating: "x", count: padding)
            let fast = try written { w in w.array { w in w.member { $0.string(filler) }; for t in times { w.member { $0.epoch(t) } } } }
            let slow = try written { w in w.array { w in w.member { $0.string(filler) }; for t in times { w.member { $0.string(t.epochString) } } } }
            #expect(fast == slow)
        }
    }

    /// A string many lines repeat reads as the string written each time: repeated, alternating,
    /// escaped, empty, and first written across a flush (then not kept, and written again).
    @Test func recurringStringsReadAsTheirStrings() throws {
        let names = ["varint", "varint", "lines", "varint", "a \"quoted\"\n name", "a \"quoted\"\n name", "", "", String(repeating: "long ", count: 40)]
        for padding in [0, 65_536 - 20] {  // the buffer nearly full before the first
            let filler = String(repeating: "x", count: padding)
            func lines(_ recurring: Bool) throws -> String {
                try written { w in
                    w.array { w in
                        w.member { $0.string(filler) }
                        for _ in 0..<3 {
                            for name in names { w.member { w in recurring ? w.recurringString(name) : w.string(name) } }
                        }
                    }
                }
            }
            #expect(try lines(true) == lines(false))
        }
    }

    /// An array of counts reads as the array written member by member: empty, one, digits and
    /// long numbers, beside other members, and near the end of the buffer (flushed first).
    @Test func naturalsReadAsTheArrayWrittenMemberByMember() throws {
        let arrays: [[UInt32]] = [[], [0], [7, 0, 10, 99, 100, 123_456_789, UInt32.max], Array(repeating: 0, count: 19), Array(0..<300)]
        for values in arrays {
            // Read every third of them from a buffer three times as long, as a timeline's series.
            let interleaved: [UInt32] = values.flatMap { v -> [UInt32] in [UInt32.max, v, 5] }
            for padding in [0, 65_536 - 40, 65_536 - 8] {  // the buffer nearly full before the array
                let filler = String(repeating: "x", count: padding)
                func expected(_ w: inout JSONWriter) {
                    w.object { w in
                        w.field("a", filler)
                        w.key("b")
                        w.array(values) { $0.int(Int($1)) }
                        w.field("c", 1)
                    }
                }
                let got = try written { w in
                    w.object { w in
                        w.field("a", filler)
                        w.key("b")
                        interleaved.withUnsafeBufferPointer { w.naturals($0, from: 1, stride: 3, count: values.count) }
                        w.field("c", 1)
                    }
                }
                #expect(got == (try written(expected)), "\(values.count) values after \(padding) bytes")
            }
        }
    }

    /// `decimal(units, scale:)` writes exactly what `double(Double(units) / 10^scale)` writes, in
    /// both of Swift's forms (exponential below 1e-4) and for whole numbers, on edge cases and
    /// 200,000 random values of 1 to 15 digits.
    @Test func decimalUnitsAreWrittenAsTheDoubleWouldBe() throws {
        var cases: [(Int64, Int)] = []
        let edges: [Int64] = [
            0, 1, 9, 10, 11, 99, 100, 101, 9_999, 10_000, 10_001, 99_999, 100_000, 100_001, 1_048_576, 3_826, 123_456_789,
            999_999_999, 1_000_000_000, 1_000_000_001, 1_500_000_000, 999_999_999_999_999, 100_000_000_000_000,
        ]
        for scale in 1...9 {
            for n in edges { cases += [(n, scale), (-n, scale)] }
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200_000 {
            let digits = Int.random(in: 1...15, using: &generator)
            var n: Int64 = 0
            for _ in 0..<digits { n = n * 10 + Int64.random(in: 0...9, using: &generator) }
            if Bool.random(using: &generator) { n = n / 1000 * 1000 }  // trailing zeros
            cases.append((Bool.random(using: &generator) ? n : -n, [3, 6, 9, Int.random(in: 1...9)].randomElement(using: &generator)!))
        }
        let fast = try written { w in w.array { w in for (n, scale) in cases { w.member { $0.decimal(n, scale: scale) } } } }
        let slow = try written { w in
            w.array { w in for (n, scale) in cases { w.member { $0.double(Double(n) / pow(10, Double(scale))) } } }
        }
        let a = fast.split(separator: ","), b = slow.split(separator: ",")
        #expect(a.count == cases.count)
        for (i, (x, y)) in zip(a, b).enumerated() where x != y {
            Issue.record("\(cases[i].0) / 10^\(cases[i].1): \(x) where the double writes \(y)")
            break
        }
    }

    /// Below 10^5 units at a scale of 9 or more (round trips in nanoseconds), `decimal` takes a
    /// path of its own: every such value, as the double would be written.
    @Test func smallUnitsAreWrittenAsTheDoubleWouldBe() throws {
        for scale in [9, 10, 13, 18] {
            let values = Array(Int64(0)...100_001)
            let fast = try written { w in w.array { w in for n in values { w.member { $0.decimal(n, scale: scale) } } } }
            let slow = try written { w in
                w.array { w in for n in values { w.member { $0.double(Double(n) / pow(10, Double(scale))) } } }
            }
            #expect(fast == slow, "scale \(scale)")
        }
    }

    /// Encoded members, as they are and with their ID's digits replaced (a worker's lines under
    /// the capture's IDs), read as the same lines written whole, in both layouts and across
    /// buffer flushes.
    @Test func encodedMembersReadAsTheLinesWrittenWhole() throws {
        let lines = (0..<3_000).map { i in "{\"a\":\"" + String(repeating: "x", count: i % 700) + "\",\"id\":\(i % 97),\"z\":1}" }
        for layout in [JSONWriter.Layout.pretty, .lines] {
            let fast = try written(layout: layout) { w in
                w.object { w in
                    w.key("connections")
                    w.array { w in
                        for (k, line) in lines.enumerated() {
                            let bytes = Array(line.utf8), at = 13 + k % 700  // after `{"a":"`, the x's and `","id":`
                            bytes.withUnsafeBytes { json in
                                if k % 2 == 0 {
                                    w.encodedMember(json)
                                } else {
                                    w.encodedMember(json, replacingDigitsAt: at, count: String(k % 97).count, with: k * 1_000)
                                }
                            }
                        }
                    }
                }
            }
            let slow = try written(layout: layout) { w in
                w.object { w in
                    w.key("connections")
                    w.array { w in
                        for (k, line) in lines.enumerated() {
                            let text = k % 2 == 0 ? line : line.replacingOccurrences(of: #""id":\#(k % 97),"#, with: #""id":\#(k * 1_000),"#)
                            Array(text.utf8).withUnsafeBytes { w.encodedMember($0) }
                        }
                    }
                }
            }
            #expect(fast == slow, "\(layout)")
            #expect(fast.contains(#""id":2999000,"#))
        }
    }

    /// A writer into memory hands over what it wrote since the last hand-over, whether its
    /// buffer goes whole (the usual case), filled past its capacity in between (the bytes that
    /// went before are kept in a block of their own), or nothing was written; it goes on in the
    /// storage of blocks given back, and positions count on across hand-overs.
    @Test func aWriterIntoMemoryHandsOverWhatItWroteSinceTheLastTime() {
        var w = JSONWriter(collecting: .lines)
        var expected: [UInt8] = [], received: [UInt8] = []
        var spare: ByteBlock?
        var generator = SplitMix64(seed: 11)
        for round in 0..<40 {
            // Mostly a few KiB between hand-overs; every fifth round past the 64 KiB buffer.
            let pieces = round % 5 == 4 ? 80 : Int(generator.next() % 6)
            for _ in 0..<pieces {
                let text = "{\"round\":\(round),\"pad\":\"" + String(repeating: "p", count: Int(generator.next() % 3_000)) + "\"}"
                let bytes = Array(text.utf8)
                bytes.withUnsafeBytes { w.raw($0) }
                expected += bytes
            }
            let block = w.takeCollected(spare: spare)
            received += Array(block.bytes)
            #expect(w.position == expected.count, "round \(round)")
            block.reset()
            spare = round % 3 == 0 ? nil : block  // given back, or not
        }
        #expect(received == expected)
    }

    /// Percentages and bits to one decimal (`k / 10`) are written as `double` writes them.
    @Test func tenthsAreWrittenAsTheDoubleWouldBe() throws {
        var values: [Double] = [0, 0.1, 0.5, 1, 9.9, 10, 33.3, 66.7, 99.9, 100, -0.1, -12.5, 115.5, 1e13 + 0.5]
        for k in 0..<20_000 { values.append(Double(k) / 10) }
        for part in 0..<300 { for whole in [1, 3, 7, 300, 12_345] { values.append((Double(part) * 1000 / Double(whole)).rounded() / 10) } }
        let fast = try written { w in w.array { w in for v in values { w.member { $0.tenths(v) } } } }
        let slow = try written { w in w.array { w in for v in values { w.member { $0.double(v) } } } }
        #expect(fast == slow)
    }

    /// The word-at-a-time check agrees with a byte-at-a-time one on every length up to 40 and on
    /// bytes around each one that needs escaping (and UTF-8's high bytes).
    @Test func escapeCheckAgreesWithEveryByte() {
        let alphabet: [UInt8] = [0x00, 0x01, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7F, 0x80, 0x9F, 0xA0, 0xC3, 0xFF, 0x61, 0x30]
        var seed: UInt64 = 1
        for length in 0...40 {
            for _ in 0..<300 {
                let bytes = (0..<length).map { _ -> UInt8 in
                    seed = seed &* 6364136223846793005 &+ 1442695040888963407
                    // Mostly plain letters, so that strings needing no escape come often.
                    return seed >> 60 < 13 ? 0x61 : alphabet[Int(seed >> 33) % alphabet.count]
                }
                let expected = bytes.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }
                #expect(bytes.withUnsafeBufferPointer { needsEscape($0) } == expected, "\(bytes)")
            }
        }
    }

    /// An event written at a pointer reads as the same event written member by member through
    /// `field`: strings to escape and strings too long for the room go through the writer.
    @Test func eventsReadAsTheirFields() throws {
        func event(_ k: Int) -> AnalysisReport.Event {
            AnalysisReport.Event(
                kind: k % 3 == 0 ? "malformed" : "invalid-protobuf", reason: k % 4 == 0 ? nil : "unmatched-end-group", connection: k,
                from: k % 5 == 0 ? "[2001:db8::1]:443" : "10.0.0.1:9000", to: "10.1.0.\(k % 256):\(10_000 + k)", offset: Int64(k) * 977 - 5,
                frame: UInt64(k) * 3 + 1, timestamp: Timestamp(nanoseconds: 1_700_000_000_000_000_000 + Int64(k) * 123_457),
                bytes: (0..<(k % 20)).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ k) }, length: Int64(k % 7) * 1_000_003,
                connectionFilter: k % 2 == 0 ? "tcp.stream == \(k)" : "ip.addr == 10.0.0.1 && tcp.port == \(k)",
                failedAt: k % 3 == 1 ? Int64(k) : nil, failedInFrame: k % 3 == 1 ? UInt64(k) * 3 : nil,
                evidenceBits: k % 3 == 0 ? Double(k % 500) / 10 : nil,
                looksLike: k % 6 == 0 ? (k % 12 == 0 ? "TLS \"record\"\n\\ \u{1}" : String(repeating: "HTTP/1.1 ", count: k % 40)) : nil)
        }
        let events = (0..<400).map(event)
        let fast = try written(layout: .pretty) { w in w.object { w in w.key("events"); w.array(events) { w, e in e.write(to: &w) } } }
        let slow = try written(layout: .pretty) { w in
            w.object { w in
                w.key("events")
                w.array(events) { w, e in
                    w.object { w in
                        w.field("bytes", hex: e.bytes)
                        w.field("connection", e.connection)
                        if let bits = e.evidenceBits { w.field("evidenceBits", bits) }
                        if let failedAt = e.failedAt { w.field("failedAt", failedAt) }
                        if let failedInFrame = e.failedInFrame { w.field("failedInFrame", failedInFrame) }
                        w.field("frame", e.frame)
                        w.field("from", e.from)
                        w.field("kind", e.kind)
                        w.field("length", e.length)
                        if let looksLike = e.looksLike { w.field("looksLike", looksLike) }
                        w.field("offset", e.offset)
                        if let reason = e.reason { w.field("reason", reason) }
                        w.field("time", e.timestamp)
                        w.field("to", e.to)
                        w.field("wiresharkFilter", e.wiresharkFilter)
                    }
                }
            }
        }
        #expect(fast == slow)
        #expect(fast.contains(#"TLS \"record\"\n\\ \u0001"#))
        // Parsed back, each event's strings are its own.
        let parsed = try JSONSerialization.jsonObject(with: Data(fast.utf8)) as! [String: Any]
        let first = (parsed["events"] as! [[String: Any]])[12]
        #expect(first["looksLike"] as? String == events[12].looksLike)
    }
}
