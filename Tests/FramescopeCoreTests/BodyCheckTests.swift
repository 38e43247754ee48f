@testable import FramescopeCore
import Testing

/// The protobuf body check inside the analyzer: the same verdicts, counts and failure sites
/// however TCP cut the stream (bodies whole in a segment take a shortcut; bodies across
/// segments, or behind a header split across them, stream through the state machine).
@Suite struct BodyCheckTests {
    struct Outcome: Equatable {
        var checked = 0
        var invalid: [ProtobufFailure: Int] = [:]
        var counts: [UInt64: Int] = [:]
        var sites: [String] = []
    }

    func run(_ spec: DissectorSpec, _ check: ProtobufCheck, chunks: [[UInt8]]) -> Outcome {
        var analyzer = DirectionAnalyzer(dissector: SharedDissector(spec.makeDissector(isClient: true)), connection: ConnectionID(0), direction: .clientToServer, protobuf: check)
        var context = AnalysisContext()
        var offset: Int64 = 0
        for (n, chunk) in chunks.enumerated() where !chunk.isEmpty {
            chunk.withUnsafeBytes { bytes in
                analyzer.feed(
                    StreamChunk(connection: ConnectionID(0), direction: .clientToServer, offset: offset, capturedOffset: offset, bytes: bytes,
                                frame: UInt64(n + 1), timestamp: .zero), context: &context)
            }
            offset += Int64(chunk.count)
        }
        analyzer.finish(context: &context)
        let a = analyzer.analysis
        let sites = context.evidence.events.filter { $0.kind == .invalidProtobuf }.map { e in
            "\(e.offset)+\(e.length) \(e.protobufFailure!.reason)@\(e.protobufFailure!.offset) \(e.bytes)"
        }
        return Outcome(checked: a.protobufChecked, invalid: a.protobufInvalidByReason.dictionary, counts: a.protobufCounts, sites: sites)
    }

    func delimited(_ bodies: [[UInt8]]) -> [UInt8] {
        bodies.flatMap { body -> [UInt8] in
            var out: [UInt8] = []
            out.appendVarint(body.count)
            return out + body
        }
    }

    /// Whole, byte by byte, and split into two at every position.
    func expectSameEverywhere(_ spec: DissectorSpec, _ check: ProtobufCheck, stream: [UInt8]) -> Outcome {
        let whole = run(spec, check, chunks: [stream])
        #expect(run(spec, check, chunks: stream.map { [$0] }) == whole, "byte by byte")
        for cut in 1..<stream.count {
            #expect(run(spec, check, chunks: [Array(stream[..<cut]), Array(stream[cut...])]) == whole, "split at \(cut)")
        }
        return whole
    }

    static let bodies: [[UInt8]] = [
        [0x08, 0x01, 0x12, 0x02, 0x68, 0x69],  // valid: 1 = 1, 2 = "hi"
        Array(#"{"cmd":1}"#.utf8),  // JSON: not wire data
        [0x08, 0x02, 0x1B, 0x08, 0x01, 0x1C],  // a group
        [0x08, 0x96],  // truncated varint
        [0x12, 0x02, 0xC3, 0x28],  // wire-valid, not UTF-8 for a string schema
        [],  // the empty message
        [0x08] + [UInt8](repeating: 0xFF, count: 10) + [0x01],  // varint too long
    ]

    @Test func invalidBodiesPastTheEvidenceCapAreCountedNotKept() throws {
        // 12,000 bodies with wire type 7 (never valid): all counted, 10,000 events kept.
        let bodies = [[UInt8]](repeating: [0x0F, 0x01], count: EvidenceRecorder.limit + 2000)
        let outcome = run(try DissectorSpec(parsing: "varint"), ProtobufCheck(schema: nil, scope: .varintDelimited), chunks: [delimited(bodies)])
        #expect(outcome.checked == bodies.count && outcome.invalid == [.badWireType: bodies.count])
        #expect(outcome.sites.count == EvidenceRecorder.limit)
    }

    @Test func wireCheckIsTheSameHoweverTheStreamIsCut() throws {
        let stream = delimited(Self.bodies)
        let outcome = expectSameEverywhere(try DissectorSpec(parsing: "varint"), ProtobufCheck(schema: nil, scope: .varintDelimited), stream: stream)
        #expect(outcome.checked == 7)
        // The JSON's '{' starts a group (field 15) whose '"' field claims 99 bytes.
        #expect(outcome.invalid == [.lengthPastEnd: 1, .truncated: 1, .badVarint: 1])
        #expect(outcome.sites.count == 3)
    }

    @Test func schemaCheckAndCountsAreTheSameHoweverTheStreamIsCut() throws {
        var schema = ProtobufSchema(
            messages: [
                .init(
                    name: "t.M",
                    fields: [
                        .init(number: 1, name: "cmd", kind: .varint, enumType: 0), .init(number: 2, name: "text", kind: .string),
                        .init(number: 3, name: "g", kind: .group, messageType: 1),
                    ]),
                .init(name: "t.M.G", fields: [.init(number: 1, name: "x", kind: .varint)]),
            ],
            enums: [.init(name: "t.Cmd", values: [(0, "NONE"), (1, "ONE"), (2, "TWO")])], root: 0)
        try schema.countBy(fieldPath: "cmd")
        // A 12-byte header with a type and the length at 8 (body after it), as seed protocols carry protobuf.
        let spec = try DissectorSpec(parsing: "length:offset=8,width=4,magic=cafef00d,type=4:4")
        let stream = Self.bodies.flatMap { body -> [UInt8] in
            [0xCA, 0xFE, 0xF0, 0x0D, 0, 0, 0, 7] + [0, 0, 0, UInt8(body.count)] + body
        }
        let outcome = expectSameEverywhere(spec, ProtobufCheck(schema: schema, scope: .lengthFramed), stream: stream)
        #expect(outcome.checked == 7)
        #expect(outcome.invalid == [.lengthPastEnd: 1, .truncated: 1, .invalidUTF8: 1, .badVarint: 1])
        #expect(outcome.counts == [1: 1, 2: 1, 0: 1])  // ONE, TWO, and the empty message's default
    }
}
