@testable import FramescopeCore
import Testing

/// Feeds frame sequences through a dissector whole, byte by byte, split at every position and
/// concatenated, and expects the same frames every time (swift-nio's ByteToMessageDecoderVerifier).
enum DissectorVerifier {
    struct Frame: Equatable, CustomStringConvertible {
        var offset: Int64
        var length: Int64
        var type: UInt64?
        var description: String { "[\(offset)+\(length)\(type.map { " type \($0)" } ?? "")]" }
    }

    /// Runs `chunks` through a fresh analyzer and returns the frames it found.
    static func frames(_ spec: DissectorSpec, isClient: Bool = true, chunks: [[UInt8]]) -> (frames: [Frame], analysis: DirectionAnalysis) {
        var analyzer = DirectionAnalyzer(dissector: SharedDissector(spec.makeDissector(isClient: isClient)), connection: ConnectionID(0), direction: isClient ? .clientToServer : .serverToClient)
        var context = AnalysisContext()
        context.recordMessages = true
        var offset: Int64 = 0
        for (n, chunk) in chunks.enumerated() where !chunk.isEmpty {
            chunk.withUnsafeBytes { bytes in
                analyzer.feed(
                    StreamChunk(connection: ConnectionID(0), direction: .clientToServer, offset: offset, capturedOffset: offset, bytes: bytes, frame: UInt64(n + 1), timestamp: .zero),
                    context: &context)
            }
            offset += Int64(chunk.count)
        }
        analyzer.finish(context: &context)
        return (context.messages.map { Frame(offset: $0.offset, length: $0.length, type: $0.type) }, analyzer.analysis)
    }

    /// `messages` are whole frames; `types` their expected type values (or nil).
    static func verify(_ spec: DissectorSpec, isClient: Bool = true, messages: [[UInt8]], types: [UInt64?]? = nil, preamble: Int = 0,
                       repeatable: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) {
        let stream = messages.flatMap { $0 }
        var expected: [Frame] = []
        var offset = Int64(preamble)
        for (i, m) in messages.enumerated() where !(i == 0 && preamble > 0) {
            expected.append(Frame(offset: offset, length: Int64(m.count), type: types?[i - (preamble > 0 ? 1 : 0)] ?? nil))
            offset += Int64(m.count)
        }
        func check(_ chunks: [[UInt8]], _ how: String) {
            let (got, analysis) = frames(spec, isClient: isClient, chunks: chunks)
            if got.count < expected.count { Issue.record("under-production (\(how)): \(got) vs \(expected)", sourceLocation: sourceLocation) }
            else if got.count > expected.count { Issue.record("over-production (\(how)): \(got) vs \(expected)", sourceLocation: sourceLocation) }
            else if got != expected { Issue.record("wrong production (\(how)): \(got) vs \(expected)", sourceLocation: sourceLocation) }
            if analysis.malformed + analysis.incompleteAtEnd > 0 { Issue.record("unexpected malformed/incomplete (\(how))", sourceLocation: sourceLocation) }
        }
        check([stream], "whole")
        check(stream.map { [$0] }, "byte by byte")
        for cut in 1..<stream.count { check([Array(stream[..<cut]), Array(stream[cut...])], "split at \(cut)") }
        check(messages, "one chunk per message")
        // Concatenated with itself: the frames repeat, shifted.
        guard repeatable else { return }
        let (twice, _) = frames(spec, isClient: isClient, chunks: [stream + (preamble > 0 ? Array(stream.dropFirst(preamble)) : stream)])
        #expect(twice.count == 2 * expected.count, "concatenated", sourceLocation: sourceLocation)
    }

    static func spec(_ text: String) -> DissectorSpec { try! DissectorSpec(parsing: text) }
}

func varintBytes(_ value: Int) -> [UInt8] {
    var v = value, out: [UInt8] = []
    repeat {
        out.append(UInt8(v & 0x7F) | (v >= 0x80 ? 0x80 : 0))
        v >>= 7
    } while v > 0
    return out
}

func bigEndian(_ value: UInt64, width: Int) -> [UInt8] { (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(width - 1 - $0))) } }

@Suite struct DissectorVerifierTests {
    @Test func varintDelimitedProtobuf() {
        let sizes = [0, 1, 5, 127, 128, 300, 16_384]
        let messages = sizes.map { varintBytes($0) + pattern(0, $0) }
        DissectorVerifier.verify(DissectorVerifier.spec("varint"), messages: messages)
    }

    @Test func crlfDelimiterIncludingSplitDelimiters() {
        let messages = ["GET / HTTP/1.1\r\n", "\r\n", "a\rb\r\n", "x\r\n"].map { Array($0.utf8) }
        DissectorVerifier.verify(DissectorVerifier.spec("delimiter"), messages: messages)
        DissectorVerifier.verify(DissectorVerifier.spec("delimiter:0x0d0a"), messages: messages)
    }

    @Test func linesAndNulAndMultiByteDelimiters() {
        DissectorVerifier.verify(DissectorVerifier.spec("lines"), messages: ["one\r\n", "two\n", "\n"].map { Array($0.utf8) })
        DissectorVerifier.verify(DissectorVerifier.spec("delimiter:\\0"), messages: [[1, 2, 0], [0], [9, 9, 9, 0]])
        DissectorVerifier.verify(DissectorVerifier.spec("delimiter:END"), messages: ["abcEND", "EEND", "ENEND"].map { Array($0.utf8) })
    }

    @Test(arguments: [1, 2, 3, 4, 8])
    func binaryLengthsOfEveryWidthBothEndians(width: Int) {
        for endian in ["big", "little"] {
            let spec = DissectorVerifier.spec("length:offset=1,width=\(width),endian=\(endian),type=0:1")
            let bodies = [0, 1, 7, 200].filter { width > 1 || $0 < 256 }
            let messages = bodies.enumerated().map { i, n in
                let field = bigEndian(UInt64(n), width: width)
                return [UInt8(i + 1)] + (endian == "big" ? field : field.reversed()) + pattern(i, n)
            }
            DissectorVerifier.verify(spec, messages: messages, types: bodies.indices.map { UInt64($0 + 1) })
        }
    }

    /// LDAP as OpenLDAP writes it: a SEQUENCE (0x30) with a BER length in its minimal form (short,
    /// 0x81 LL, 0x82 LL LL) or the 4-byte form Active Directory uses (0x84 …), in every chunking.
    @Test func berLengthsInEveryDefiniteForm() {
        let spec = DissectorVerifier.spec("length:offset=1,encoding=ber,magic=30")
        func ber(_ n: Int, long: Int? = nil) -> [UInt8] {
            if long == nil && n < 0x80 { return [UInt8(n)] }
            let width = long ?? (n < 0x100 ? 1 : n < 0x10000 ? 2 : 3)
            return [0x80 | UInt8(width)] + bigEndian(UInt64(n), width: width)
        }
        let sizes: [(Int, Int?)] = [(0, nil), (5, nil), (127, nil), (128, nil), (300, nil), (70_000, nil), (12, 4), (200, 4), (3, 1)]
        let messages = sizes.enumerated().map { i, size in [0x30] + ber(size.0, long: size.1) + pattern(i, size.0) }
        DissectorVerifier.verify(spec, messages: messages)
        // The indefinite form (0x80) and lengths of 5 or more bytes are malformed, not frames.
        for bad: [UInt8] in [[0x30, 0x80, 0x02, 0x01, 0x01, 0x00, 0x00], [0x30, 0x85, 0, 0, 0, 0, 1, 0]] {
            let (got, analysis) = DissectorVerifier.frames(spec, isClient: true, chunks: [bad])
            #expect(got.isEmpty && analysis.malformedByReason[.badBERLength] == 1, "\(bad)")
        }
    }

    /// preset:ldap also wants the messageID INTEGER (0x02) right after the length, whatever its
    /// form: the SEQUENCEs nested in a message (an attribute: `30 LL 04 …`) are no frame starts.
    @Test func ldapBodyStartsWithTheMessageID() {
        let spec = DissectorVerifier.spec("preset:ldap")
        let unbind: [UInt8] = [0x30, 0x05, 0x02, 0x01, 0x03, 0x42, 0x00]
        let long: [UInt8] = [0x30, 0x82, 0x01, 0x2C, 0x02, 0x01, 0x07] + pattern(1, 297)
        DissectorVerifier.verify(spec, messages: [unbind, long, unbind])
        // Three and four length bytes: the messageID tag at byte 6, the last the length field at
        // its longest covers, and at byte 7, past it (byte by byte, the cutter once buffered six
        // bytes and trapped).
        let three: [UInt8] = [0x30, 0x83, 0x00, 0x00, 0x05, 0x02, 0x01, 0x09, 0x42, 0x00]
        let four: [UInt8] = [0x30, 0x84, 0x00, 0x00, 0x00, 0x05, 0x02, 0x01, 0x0A, 0x42, 0x00]
        DissectorVerifier.verify(spec, messages: [four, unbind, three, four])
        let attribute: [UInt8] = [0x30, 0x06, 0x04, 0x02, 0x63, 0x6E, 0x31, 0x00]
        let (got, analysis) = DissectorVerifier.frames(spec, isClient: true, chunks: [attribute])
        #expect(got.isEmpty && analysis.malformedByReason[.badMagic] == 1)
        // A length too short to hold the body magic is no frame either.
        let (short, shortAnalysis) = DissectorVerifier.frames(spec, isClient: true, chunks: [[0x30, 0x00, 0x02]])
        #expect(short.isEmpty && shortAnalysis.malformedByReason[.lengthSmallerThanHeader] == 1)
    }

    @Test func seedHeaders() {
        // 0xff magic + size(+4) + commandId (seed 002).
        let seed002 = DissectorVerifier.spec("length:offset=4,width=4,magic=000000ff,type=8:4")
        let m002 = [10, 0, 3000].enumerated().map { i, n in [0, 0, 0, 0xFF] + bigEndian(UInt64(n + 4), width: 4) + bigEndian(UInt64(100 + i), width: 4) + pattern(i, n) }
        DissectorVerifier.verify(seed002, messages: m002, types: [100, 101, 102])
        // 7-byte header: version(2) function(2) zip(1) length(2) (seed 003).
        let seed003 = DissectorVerifier.spec("length:offset=5,width=2,type=2:2")
        let m003 = [0, 9, 70].map { n in [0, 1, 0, 7, 0] + bigEndian(UInt64(n), width: 2) + pattern(n, n) }
        DissectorVerifier.verify(seed003, messages: m003, types: [7, 7, 7])
        // 10-byte header with 4 ASCII digits at bytes 6..9 (seed 000).
        let seed000 = DissectorVerifier.spec("length:offset=6,width=4,encoding=ascii")
        let m000 = [0, 42, 1234].map { n in Array("HEADER".utf8) + Array(String(format4(n)).utf8) + pattern(n, n) }
        DissectorVerifier.verify(seed000, messages: m000)
        // 37-byte "V0.1" header: 8 ASCII digits at 4 give the total length (seed 004).
        let seed004 = DissectorVerifier.spec("length:offset=4,width=8,encoding=ascii,adjust=-12,magic=56302e31,type=12:8")
        let m004 = [2, 300].map { n in
            Array("V0.1".utf8) + Array(pad8(37 + n).utf8) + Array(pad8(5).utf8) + Array(String(repeating: "0", count: 17).utf8) + pattern(n, n)
        }
        DissectorVerifier.verify(seed004, messages: m004, types: [0x3030_3030_3030_3035, 0x3030_3030_3030_3035])
    }

    @Test func mqttVarintAtOffsetOne() {
        let spec = DissectorVerifier.spec("preset:mqtt")
        let messages = [0, 2, 200, 20_000].map { n in [0x30] + varintBytes(n) + pattern(n, n) }
        DissectorVerifier.verify(spec, messages: messages, types: [0x30, 0x30, 0x30, 0x30])
    }

    @Test func gitPktLineWithFlushPackets() {
        let lines = ["000ahello\n", "0000", "0009done\n", "0001", "0000"].map { Array($0.utf8) }
        DissectorVerifier.verify(DissectorVerifier.spec("preset:git"), messages: lines)
    }

    @Test func postgresStartupThenTypedMessages() {
        let ssl: [UInt8] = bigEndian(8, width: 4) + bigEndian(80_877_103, width: 4)
        let startup: [UInt8] = bigEndian(9, width: 4) + bigEndian(196_608, width: 4) + [0]
        let query: [UInt8] = [0x51] + bigEndian(8, width: 4) + Array("1;\0\0".utf8)
        DissectorVerifier.verify(DissectorVerifier.spec("preset:postgres"), messages: [ssl, startup, query], types: [nil, nil, 0x51], repeatable: false)
        let ready: [UInt8] = [0x5A] + bigEndian(5, width: 4) + [0x49]
        DissectorVerifier.verify(DissectorVerifier.spec("preset:postgres"), isClient: false, messages: [[0x4E], ready, ready], types: [0x5A, 0x5A], preamble: 1)
    }

    @Test func http2PrefaceIsPreamble() {
        let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
        let settings: [UInt8] = [0, 0, 6, 4, 0, 0, 0, 0, 0] + [0, 3, 0, 0, 0, 100]
        let ping: [UInt8] = [0, 0, 8, 6, 0, 0, 0, 0, 0] + pattern(0, 8)
        DissectorVerifier.verify(DissectorVerifier.spec("preset:http2"), messages: [preface, settings, ping], types: [4, 6], preamble: preface.count)
    }
}

private func format4(_ n: Int) -> String { String(repeating: "0", count: 4 - String(n).count) + String(n) }
private func pad8(_ n: Int) -> String { String(repeating: "0", count: 8 - String(n).count) + String(n) }
