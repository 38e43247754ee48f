import FramescopeSynthetic
@testable import FramescopeCore
import Foundation
import Testing

/// The recovery never reports a boundary in random bytes or random text: streams picked up
/// mid-stream (so every offset, the first segment's start included, is a candidate) in random
/// segmentation, through every kind of dissector.
@Suite struct RecoveryPropertyTests {
    /// Frames found in `streams` random streams, and the streams with any. `FS_BAR=bits` in the
    /// environment measures at another bar.
    static func falseFrames(_ spec: String, streams: Int, seed: UInt64) -> (frames: Int, streams: Int, bytes: Int64) {
        let shared = SharedDissector(try! DissectorSpec(parsing: spec).makeDissector(isClient: true))
        var random = SplitMix64(seed: seed)
        var context = AnalysisContext()
        if let bar = ProcessInfo.processInfo.environment["FS_BAR"].flatMap(Double.init) { context.recoveryBudget.threshold = bar }
        var frames = 0, hit = 0, total: Int64 = 0
        var stream: [UInt8] = []
        for n in 0..<streams {
            // 16 B to 4 KiB, log-uniform, in segments of 1 to 1460 bytes; every 100th stream
            // 64 KiB in 1448-byte segments (a bulk body). Random bytes, printable text and
            // lowercase letters in turn.
            let long = n % 100 == 99
            let size = long ? 64 << 10 : 16 << Int(random.next() % 9) + Int(random.next() % 16)
            stream.removeAll(keepingCapacity: true)
            for _ in 0..<size {
                switch n % 3 {
                case 0: stream.append(UInt8(truncatingIfNeeded: random.next()))
                case 1: stream.append(UInt8(0x20 + random.next() % 95))
                default: stream.append(UInt8(0x61 + random.next() % 26))
                }
            }
            // Segments of 1 to 1460 bytes, log-uniform.
            let a = Self.pickedUp(stream, dissector: shared, connection: n, context: &context) {
                long ? 1448 : max(1, (1 << Int(random.next() % 11)) + Int(random.next() % 64))
            }
            frames += a.messages + a.incompleteAtEnd
            if a.messages + a.incompleteAtEnd > 0 { hit += 1 }
            total += Int64(size)
            precondition(a.leadingBytes + a.undissectedBytes + a.messageBytes + a.incompleteBytes + a.preambleBytes == Int64(size) || a.messages > 0)
        }
        return (frames, hit, total)
    }

    /// Dissectors that must never frame random bytes at the default bar: a varint, and 1- and
    /// 2-byte lengths without a magic.
    static let strict = ["varint", "length:offset=0,width=1", "length:offset=0,width=2", "length:offset=1,width=1", "length:offset=2,width=2,endian=little"]

    /// 10,000 streams; under AddressSanitizer (scripts/test-asan) 1,000, which checks memory, not odds.
    static let count = ProcessInfo.processInfo.environment["FRAMESCOPE_ASAN"] == nil ? 10_000 : 1_000

    @Test(arguments: strict) func noBoundaryInRandomStreams(spec: String) {
        let (frames, streams, bytes) = Self.falseFrames(spec, streams: Self.count, seed: 7)
        print("recovery false positives, \(spec): \(streams) of \(Self.count) random streams (\(bytes) bytes), \(frames) frames")
        #expect(frames == 0)
    }

    /// The search's own decoding of a plain varint length (`PlainVarintDissector`) answers as the
    /// length-field dissector does past a stream's start, byte string by byte string: frames,
    /// lengths, bodies and malformed reasons, at limits a length reaches and varints that run out.
    @Test func plainVarintDecodesAsTheLengthFieldDissector() throws {
        var random = SplitMix64(seed: 11)
        for limit in [1, 2, 5, 127, 128, 129, 300, 16_384, 16 << 20] {
            let general = LengthFieldDissector(encoding: .varint, maxFrameLength: limit, preamble: [0x50])
            let plain = PlainVarintDissector(limit: try #require(general.plainVarintLimit))
            for _ in 0..<20_000 {
                // Up to 7 bytes, each with its continuation bit set half the time.
                let bytes = (0..<random.next() % 8).map { _ in UInt8(truncatingIfNeeded: random.next()) | (random.next() % 2 == 0 ? 0x80 : 0) }
                bytes.withUnsafeBytes { b in
                    var (plainStart, generalStart) = (false, false)
                    #expect(plain.decode(b, consumed: 0, atStreamStart: &plainStart) == general.decode(b, consumed: 0, atStreamStart: &generalStart), "\(limit): \(bytes)")
                }
            }
        }
        // Anything more in the header takes the general path.
        let others = [
            LengthFieldDissector(encoding: .binary), LengthFieldDissector(lengthFieldOffset: 1, encoding: .varint),
            LengthFieldDissector(encoding: .varint, lengthAdjustment: 2), LengthFieldDissector(encoding: .varint, magic: [0xAB]),
            LengthFieldDissector(encoding: .varint, magicOffset: 1), LengthFieldDissector(encoding: .varint, typeField: (1, 1)),
            LengthFieldDissector(encoding: .varint, minFrameLength: 2), LengthFieldDissector(encoding: .varint, headerOnlyBelow: 1),
            LengthFieldDissector(encoding: .varint, bodyOffset: 1), LengthFieldDissector(encoding: .varint, bodyMagic: [0x0A]),
        ]
        for other in others { #expect(other.plainVarintLimit == nil, "\(other)") }
        guard case .lengthField(let varint) = try DissectorSpec(parsing: "varint:max=1M").makeDissector(isClient: true) else { return #expect(Bool(false)) }
        #expect(varint.plainVarintLimit == 1 << 20)
    }

    /// The others are measured and stated; a magic or a wide length makes false frames rarer still.
    static let measured = [
        "length:offset=0,width=4", "length:offset=4,width=4,magic=000000ff,type=8:4", "length:offset=6,width=4,encoding=ascii",
        "preset:tls", "preset:mqtt", "preset:postgres", "preset:ldap", "preset:tpkt", "preset:git",
    ]

    @Test(arguments: measured) func falseBoundariesAreRare(spec: String) {
        let (frames, streams, bytes) = Self.falseFrames(spec, streams: Self.count, seed: 11)
        print("recovery false positives, \(spec): \(streams) of \(Self.count) random streams (\(bytes) bytes), \(frames) frames")
        #expect(streams <= 10)
    }

    /// `stream` analyzed as a direction picked up mid-stream, in segments of the lengths
    /// `nextSegment` gives (cut at the stream's end).
    static func pickedUp(
        _ stream: [UInt8], dissector: SharedDissector, connection n: Int, context: inout AnalysisContext, nextSegment: () -> Int
    ) -> DirectionAnalysis {
        var analyzer = DirectionAnalyzer(dissector: dissector, connection: ConnectionID(n), direction: .clientToServer)
        var offset = 0, frame: UInt64 = 0
        while offset < stream.count {
            let length = min(stream.count - offset, nextSegment())
            frame += 1
            stream.withUnsafeBytes { b in
                analyzer.feed(
                    StreamChunk(connection: ConnectionID(n), direction: .clientToServer, offset: Int64(offset), capturedOffset: Int64(offset),
                                bytes: b.slice(from: offset, count: length), frame: frame, timestamp: .zero, midStream: true),
                    context: &context)
            }
            offset += length
        }
        analyzer.finish(context: &context)
        return analyzer.analysis
    }

    /// Frames found in `stream`, picked up mid-stream in segments of `segment` bytes.
    static func frames(in stream: [UInt8], spec: String, segment: Int) -> Int {
        var context = AnalysisContext()
        let a = pickedUp(stream, dissector: SharedDissector(try! DissectorSpec(parsing: spec).makeDissector(isClient: true)), connection: 0,
                         context: &context) { segment }
        return a.messages + a.incompleteAtEnd
    }

    /// Filler — a bulk body of one byte repeated, or of a short pattern — is not framing: every
    /// offset in it starts a chain of valid headers (a repeated type, for varint lengths bodies
    /// that parse as protobuf), so without a discount for frames repeating themselves an MQTT
    /// direction picked up inside a publish of 'X's framed 254 messages of 'X' (the corpus's
    /// mqtt-big-publish cut at a tenth of its frames). Every byte value, and patterns of 2 to 90
    /// bytes of random bytes and of text, 16 KiB of each in bulk segments.
    @Test(arguments: strict + measured) func noBoundaryInFiller(spec: String) {
        var random = SplitMix64(seed: 5)
        var found: [String] = []
        for value in 0...255 {
            let n = Self.frames(in: [UInt8](repeating: UInt8(value), count: 16 << 10), spec: spec, segment: 1448)
            if n > 0 { found.append("\(n) frames in a run of \(value)") }
        }
        for period in [2, 3, 4, 5, 8, 16, 90] {
            for text in [false, true] {
                for _ in 0..<8 {
                    let pattern = (0..<period).map { _ in text ? UInt8(0x20 + random.next() % 95) : UInt8(truncatingIfNeeded: random.next()) }
                    let stream = (0..<(16 << 10)).map { pattern[$0 % period] }
                    let n = Self.frames(in: stream, spec: spec, segment: 1448)
                    if n > 0 { found.append("\(n) frames in \(pattern) repeated") }
                }
            }
        }
        #expect(found.isEmpty, "\(spec): \(found.count) fillers framed: \(found.prefix(5))")
    }
}
