import FramescopeCapture
import FramescopeCore
import Foundation
import Testing

/// Reassembled streams must equal tshark's "follow TCP stream", byte for byte (sha256), with the
/// same gaps, on every capture of ../shared/corpus.
@Suite struct ConformanceTests {
    struct Truth: Decodable {
        struct Stream: Decodable {
            var stream: Int
            var directions: [String: Direction]
        }
        struct Direction: Decodable {
            var src: String
            var dst: String
            var reassembled_bytes: Int64
            var sha256: String
            var gaps: [Gap]?
        }
        struct Gap: Decodable {
            var at_offset: Int64
            var missing_bytes: Int64
        }
        struct Totals: Decodable { var streams: Int }
        var name: String
        var file: String
        var totals: Totals
        var streams: [Stream]
        var tool_warnings: [String]
    }

    /// Where tshark, not framescope, is wrong; none so far. name → reason.
    static let knownTsharkFaults: [String: String] = [:]

    static var truthFiles: [URL] {
        guard let corpus = corpusDirectory else { return [] }
        let folder = corpus.appendingPathComponent("truth")
        return ((try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? [])
            .filter { $0.pathExtension == "json" }.sorted { $0.path < $1.path }
    }

    @Test func corpusIsPresentOrCIFails() {
        if corpusDirectory == nil {
            oracleMissing("conformance: ../shared/corpus not found beside the checkout (set FRAMESCOPE_CORPUS to point at it)")
        } else {
            #expect(Self.truthFiles.count >= 40)
        }
    }

    @Test(arguments: truthFiles)
    func streamsMatchTshark(truthFile: URL) throws {
        let truth = try JSONDecoder().decode(Truth.self, from: Data(contentsOf: truthFile))
        if let reason = Self.knownTsharkFaults[truth.name] {
            print("known tshark fault in \(truth.name): \(reason)")
            return
        }
        let capture = corpusDirectory!.appendingPathComponent(truth.file).path
        let (table, reader) = try analyze([capture], sink: HashingSink())
        let sink = table.sink
        // A capture whose last record is truncated must still be read up to the cut.
        if truth.tool_warnings.contains(where: { $0.contains("truncated") }) {
            #expect(reader.errors.count == 1, "\(truth.name): the truncated record should be reported")
        } else {
            #expect(reader.errors.isEmpty, "\(truth.name): \(reader.errors)")
        }
        #expect(sink.connections == truth.totals.streams, "\(truth.name): connection count")
        for stream in truth.streams {
            for (_, direction) in stream.directions.sorted(by: { $0.key < $1.key }) {
                let expectedGaps = (direction.gaps ?? []).map { "\($0.at_offset)+\($0.missing_bytes)" }
                guard let ours = sink.streams["\(direction.src)>\(direction.dst)"] else {
                    #expect(direction.reassembled_bytes == 0 && expectedGaps.isEmpty, "\(truth.name) stream \(stream.stream): \(direction.src) → \(direction.dst) missing")
                    continue
                }
                let where_ = "\(truth.name) stream \(stream.stream) \(direction.src) → \(direction.dst)"
                #expect(ours.bytes == direction.reassembled_bytes, "\(where_): bytes")
                #expect(ours.sha256 == direction.sha256, "\(where_): sha256")
                #expect(ours.gaps.map { "\($0.0)+\($0.1)" } == expectedGaps, "\(where_): gaps")
            }
        }
    }
}
