import Foundation
import Testing

/// The examples behind the partial and merged counts, checked against tshark: the filter of a
/// partial message shows exactly its segments, and they cover its bytes; a merged segment's
/// frame starts at its offset.
@Suite struct SplitExampleTests {
    let cli = CLITests()

    /// (frame, relative sequence number, payload length) of the frames `filter` shows.
    func tsharkSegments(_ capture: String, _ filter: String) throws -> [(frame: Int, seq: Int64, len: Int64)] {
        let result = try cli.run(
            ["-r", capture, "-Y", filter, "-T", "fields", "-e", "frame.number", "-e", "tcp.seq", "-e", "tcp.len"],
            executable: try #require(ExportCLITests.tshark))
        return result.stdout.split(separator: "\n").map { line in
            let f = line.split(separator: "\t")
            return (Int(f[0])!, Int64(f[1])!, Int64(f[2])!)
        }
    }

    @Test(arguments: ["im-varint.pcap", "seed-8byte-header.pcap"])
    func examplesPointAtTheSegmentsTsharkShows(sample: String) throws {
        guard ExportCLITests.tshark != nil else { return oracleMissing("split examples against tshark: no tshark") }
        let capture = CLITests.root.appendingPathComponent("samples/" + sample).path
        let spec = sample.hasPrefix("seed-8byte") ? "length:offset=4,width=4" : "varint"
        let result = try cli.run(["analyze", capture, "--dissector", spec, "--format", "json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let examples = try #require(json["examples"] as? [[String: Any]])
        #expect(!examples.isEmpty)
        for kind in ["partial", "merged"] {
            for from in Set(examples.compactMap { $0["from"] as? String }) {
                // The first three, then only the first of a cause not shown yet.
                let chosen = examples.filter { $0["kind"] as? String == kind && $0["from"] as? String == from }
                let causes = chosen.map { $0["cause"] as? String ?? "" }
                for (i, cause) in causes.enumerated().dropFirst(3) { #expect(!causes[..<i].contains(cause)) }
            }
        }
        for e in examples {
            let filter = try #require(e["wiresharkFilter"] as? String)
            let offset = try #require(e["offset"] as? Int64), count = try #require(e["count"] as? Int)
            let segments = try tsharkSegments(capture, filter)
            // tshark's relative sequence numbers start at 1 after the SYN; stream offsets at 0.
            if e["kind"] as? String == "partial" {
                let length = try #require(e["length"] as? Int64)
                #expect(segments.count == count, "\(filter)")
                #expect(segments.first.map { $0.seq - 1 <= offset && offset < $0.seq - 1 + $0.len } == true)
                #expect(segments.last.map { $0.seq - 1 < offset + length && offset + length <= $0.seq - 1 + $0.len } == true)
            } else {
                #expect(count >= 2)
                #expect(segments.count == 1 && segments.first?.seq == offset + 1, "\(filter)")
            }
        }
        let text = try cli.run(["analyze", capture, "--dissector", spec]).stdout
        #expect(text.contains("split and glued, examples:") && text.contains("wireshark: tcp.stream == 0 && tcp.srcport == "))
        let markdown = try cli.run(["analyze", capture, "--dissector", spec, "--format", "markdown"]).stdout
        #expect(markdown.contains("### Split and glued: examples"))
    }
}
