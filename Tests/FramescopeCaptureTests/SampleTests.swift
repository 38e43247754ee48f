import FramescopeCapture
@testable import FramescopeCore
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

    @Test(arguments: truth.captures.keys.sorted())
    func sampleMatchesItsTruth(name: String) throws {
        let capture = Self.truth.captures[name]!
        let spec = try DissectorSpec(parsing: capture.spec)
        let (table, reader) = try analyze(
            [Self.samples.appendingPathComponent(name).path], sink: SinkPair(HashingSink(), Analyzer(choice: DissectorChoice(byDefault: spec))))
        #expect(reader.errors.isEmpty)
        var figures: [String: (DirectionAnalysis, DirectionStatistics)] = [:]
        for c in table.sink.second.connections {
            for d in FramescopeCore.Direction.allCases {
                let (from, to) = d == .clientToServer ? (c.summary.info.client, c.summary.info.server) : (c.summary.info.server, c.summary.info.client)
                figures["\(from)>\(to)"] = (c.directions[d.rawValue], c.summary[d])
            }
        }
        for entry in capture.directions {
            let key = "\(entry.from)>\(entry.to)", place = "\(name) \(entry.from) → \(entry.to)"
            let stream = table.sink.first.streams[key]
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
}
