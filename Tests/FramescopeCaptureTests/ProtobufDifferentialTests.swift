@testable import FramescopeCore
import Foundation
import Testing

/// The streaming body check against Google's protobuf library on 600 mutated Envelope bodies
/// (Fixtures/protobuf-differential.json, by scripts/protobuf-differential.py): the same verdict,
/// as wire data and as `framescope.samples.Envelope`, fed whole and in 7-byte pieces. One known
/// difference: Python's library (upb) keeps a field numbered 0 as an unknown field, where the
/// C++, Java and Go libraries reject it, as framescope does (a zero tag in a stream is a desync
/// sign).
@Suite struct ProtobufDifferentialTests {
    struct Fixture: Decodable {
        struct Case: Decodable {
            var body: String
            var wire: Bool
            var envelope: Bool
        }
        var cases: [Case]
    }

    static let fixture = try! JSONDecoder().decode(
        Fixture.self, from: Data(contentsOf: repositoryRoot.appendingPathComponent("Tests/FramescopeCaptureTests/Fixtures/protobuf-differential.json")))

    func verdict(_ body: [UInt8], schema: ProtobufSchema?, piece: Int) -> ProtobufFailure? {
        var scanner = ProtobufScanner(schema: schema)
        scanner.begin(length: Int64(body.count))
        var start = 0
        while start < body.count {
            let end = min(body.count, start + piece)
            body[start..<end].withUnsafeBytes { scanner.feed($0) }
            start = end
        }
        return scanner.finish()?.reason
    }

    @Test func verdictsEqualTheProtobufLibrary() throws {
        let schema = try compileSampleSchema("chat.proto", message: "framescope.samples.Envelope", countBy: nil)
        #expect(Self.fixture.cases.count >= 500)
        #expect(Self.fixture.cases.contains { $0.wire && !$0.envelope } && Self.fixture.cases.contains { !$0.wire })
        var disagreements: [String] = []
        var fieldZero = 0
        for c in Self.fixture.cases {
            let body = stride(from: 0, to: c.body.count, by: 2).map { i -> UInt8 in
                let start = c.body.index(c.body.startIndex, offsetBy: i)
                return UInt8(c.body[start..<c.body.index(start, offsetBy: 2)], radix: 16)!
            }
            for piece in [body.count + 1, 7] {
                let wireFailure = verdict(body, schema: nil, piece: piece), typedFailure = verdict(body, schema: schema, piece: piece)
                if wireFailure == .badFieldNumber && c.wire {
                    fieldZero += 1
                    continue
                }
                let wire = wireFailure == nil, typed = typedFailure == nil
                if wire != c.wire || typed != c.envelope {
                    disagreements.append("\(c.body) in \(piece)-byte pieces: wire \(wire) (library \(c.wire)), Envelope \(typed) (library \(c.envelope))")
                }
            }
        }
        #expect(fieldZero <= 10, "field number 0 should stay a rare case in the fixture")
        let shown = disagreements.prefix(10).joined(separator: "\n")
        #expect(disagreements.isEmpty, "\(disagreements.count) disagreements:\n\(shown)")
    }
}
