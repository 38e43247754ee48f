import FramescopeCapture
@testable import FramescopeCore
import FramescopeProtobuf
import Foundation
import Testing

/// The bundled samples against samples/truth.json (scripts/sample-truth.py): reassembled bytes
/// equal tshark's follow stream, and each sample's analysis equals an independent framing walk
/// over tshark's follow segments.
@Suite struct SampleTests {
    struct Truth: Decodable {
        struct Capture: Decodable {
            var spec: String
            var directions: [Entry]
            var schema: Schema?
        }
        struct Schema: Decodable {
            var proto: String
            var message: String
            var countBy: String
        }
        /// What Google's protobuf library says of the bodies.
        struct Protobuf: Decodable {
            var wireInvalid: Int
            var schemaInvalid: Int?
            var counts: [String: Int]?
        }
        struct Entry: Decodable {
            var from: String
            var to: String
            var bytes: Int64
            var sha256: String
            var segments: Int
            var messages: Int
            var partialMessages: Int
            var mergedSegments: Int
            var naiveReaderLoss: Int
            var malformed: Int
            var undissectedBytes: Int64
            var trailingIncompleteBytes: Int
            var protobuf: Protobuf?
        }
        var captures: [String: Capture]
    }

    static let samples = repositoryRoot.appendingPathComponent("samples")
    static let truth = try! JSONDecoder().decode(Truth.self, from: Data(contentsOf: samples.appendingPathComponent("truth.json")))

    @Test func thereIsASampleForEverySeedProtocol() {
        #expect(Self.truth.captures.count >= 8)
        for seed in ["seed-0xff-command", "seed-7byte-header", "seed-ascii10-header", "seed-v01-header", "seed-8byte-header", "im-varint"] {
            #expect(Self.truth.captures["\(seed).pcap"] != nil)
        }
    }

    /// Each direction's analysis and statistics, keyed `from>to`, and the streams' hashes.
    private func analyze(_ name: String, spec: DissectorSpec, protobuf: ProtobufCheck? = nil) throws -> (
        figures: [String: (DirectionAnalysis, DirectionStatistics)], streams: [String: (bytes: Int64, sha256: String)]
    ) {
        let analyzer = Analyzer(choice: DissectorChoice(byDefault: spec), protobuf: protobuf)
        let (table, reader) = try FramescopeCaptureTests.analyze([Self.samples.appendingPathComponent(name).path], sink: SinkPair(HashingSink(), analyzer))
        #expect(reader.errors.isEmpty)
        var figures: [String: (DirectionAnalysis, DirectionStatistics)] = [:]
        for c in table.sink.second.connections {
            for d in FramescopeCore.Direction.allCases {
                let (from, to) = d == .clientToServer ? (c.summary.info.client, c.summary.info.server) : (c.summary.info.server, c.summary.info.client)
                figures["\(from)>\(to)"] = (c.directions?[d] ?? DirectionAnalysis(), c.summary[d])
            }
        }
        return (figures, table.sink.first.streams.mapValues { ($0.bytes, $0.sha256) })
    }

    @Test(arguments: truth.captures.keys.sorted())
    func sampleMatchesItsTruth(name: String) throws {
        let capture = Self.truth.captures[name]!
        let spec = try DissectorSpec(parsing: capture.spec)
        let (figures, streams) = try analyze(name, spec: spec)
        for entry in capture.directions {
            let key = "\(entry.from)>\(entry.to)", place = "\(name) \(entry.from) → \(entry.to)"
            let stream = streams[key]
            #expect(stream?.bytes == entry.bytes && stream?.sha256 == entry.sha256, "\(place): bytes differ from tshark")
            let (a, s) = try #require(figures[key])
            #expect(s.segments == entry.segments, "\(place): segments")
            #expect(a.messages == entry.messages, "\(place): messages")
            #expect(a.partialMessages == entry.partialMessages, "\(place): partial")
            #expect(a.mergedSegments == entry.mergedSegments, "\(place): merged")
            #expect(a.naiveReaderLoss == entry.naiveReaderLoss, "\(place): naive-reader loss")
            #expect(a.malformed == entry.malformed, "\(place): malformed")
            #expect(a.undissectedBytes == entry.undissectedBytes, "\(place): undissected")
            #expect((a.incompleteAtEnd > 0) == (entry.trailingIncompleteBytes > 0), "\(place): incomplete")
            #expect(s.segmentsOverMSS == 0, "\(place): recorded without offload, no super-segments")
        }
    }

    /// Bodies checked as protobuf wire data, and by the sample's schema, against Google's
    /// protobuf library (scripts/sample-truth.py parses every body with it).
    @Test(arguments: truth.captures.keys.sorted().filter { truth.captures[$0]!.directions.contains { $0.protobuf != nil } })
    func protobufBodiesMatchTheProtobufLibrary(name: String) throws {
        let capture = Self.truth.captures[name]!
        let spec = try DissectorSpec(parsing: capture.spec)
        let wire = try analyze(name, spec: spec, protobuf: ProtobufCheck(schema: nil, scope: .varintDelimited)).figures
        var schema: ProtobufSchema?
        var typed: [String: (DirectionAnalysis, DirectionStatistics)] = [:]
        if let s = capture.schema {
            schema = try compileSampleSchema(s.proto, message: s.message, countBy: s.countBy)
            typed = try analyze(name, spec: spec, protobuf: ProtobufCheck(schema: schema, scope: .varintDelimited)).figures
        }
        for entry in capture.directions {
            let key = "\(entry.from)>\(entry.to)", place = "\(name) \(entry.from) → \(entry.to)"
            let truth = try #require(entry.protobuf)
            let (a, _) = try #require(wire[key])
            #expect(a.protobufChecked == entry.messages, "\(place): every message body checked")
            #expect(a.protobufInvalid == truth.wireInvalid, "\(place): bodies that are not protobuf wire data")
            guard let schema, let (t, _) = typed[key] else { continue }
            #expect(t.protobufInvalid == truth.schemaInvalid, "\(place): bodies that do not parse as \(schema.rootName)")
            let counts = Dictionary(t.protobufCounts.map { (schema.countLabel($0.key), $0.value) }, uniquingKeysWith: +)
            #expect(counts == truth.counts, "\(place): counts by \(schema.countBy?.name ?? "")")
        }
    }
}
