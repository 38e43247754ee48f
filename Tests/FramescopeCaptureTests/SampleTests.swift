import FramescopeCapture
import FramescopeCore
import Foundation
import Testing

/// The bundled samples against their tshark follow-stream truth (samples/truth.json,
/// made by scripts/sample-truth.py).
@Suite struct SampleTests {
    struct Truth: Decodable {
        struct Entry: Decodable {
            var from: String
            var to: String
            var bytes: Int64
            var sha256: String
        }
        var captures: [String: [Entry]]
    }

    static let samples = repositoryRoot.appendingPathComponent("samples")

    @Test func everySampleMatchesTshark() throws {
        let truth = try JSONDecoder().decode(Truth.self, from: Data(contentsOf: Self.samples.appendingPathComponent("truth.json")))
        #expect(truth.captures.count >= 3)
        for (name, entries) in truth.captures {
            let (table, reader) = try analyze([Self.samples.appendingPathComponent(name).path], sink: HashingSink())
            #expect(reader.errors.isEmpty)
            for entry in entries {
                let ours = table.sink.streams["\(entry.from)>\(entry.to)"]
                #expect(ours?.bytes == entry.bytes, "\(name) \(entry.from) → \(entry.to)")
                #expect(ours?.sha256 == entry.sha256, "\(name) \(entry.from) → \(entry.to)")
            }
        }
    }
}
