import Foundation
import Testing

/// `analyze --export-messages`: the frames that carried the selected messages, copied as
/// captured into a pcap a colleague can open.
@Suite struct ExportMessagesTests {
    let cli = CLITests()

    /// Frame → (time, captured length) of a capture, by tshark.
    func frames(_ capture: String, filter: String? = nil) throws -> [(time: String, length: Int)] {
        let result = try cli.run(
            ["-r", capture, "-T", "fields", "-e", "frame.time_epoch", "-e", "frame.cap_len"] + (filter.map { ["-Y", $0] } ?? []),
            executable: try #require(ExportCLITests.tshark))
        return result.stdout.split(separator: "\n").map {
            let f = $0.split(separator: "\t")
            return (String(f[0]), Int(f[1])!)
        }
    }

    @Test func partialMessagesExportTheFramesThatCarriedThem() throws {
        guard ExportCLITests.tshark != nil else { return oracleMissing("message export: no tshark") }
        let out = scratchDirectory + "framescope-export-\(UUID().uuidString).pcap"
        let messages = scratchDirectory + "framescope-export-\(UUID().uuidString).ndjson"
        let result = try cli.run(
            ["analyze", CLITests.sample, "--dissector", "varint", "--export-messages", out, "--export-only", "partial", "--messages", messages, "-o", "/dev/null"])
        #expect(result.status == 0, "\(result.stderr)")
        let original = try frames(CLITests.sample), exported = try frames(out)
        // Every exported frame is an original one, in order, bytes and times kept.
        var numbers: [Int] = []
        var next = 0
        for frame in exported {
            let i = try #require(original[next...].firstIndex { $0.time == frame.time && $0.length == frame.length }, "\(frame) is no original frame")
            numbers.append(i + 1)
            next = i + 1
        }
        // The first and last frame of every partial message are there, and nothing outside them.
        var ranges: [ClosedRange<Int>] = []
        for line in try String(contentsOfFile: messages, encoding: .utf8).split(separator: "\n") {
            let m = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            guard (m["segments"] as? Int ?? 0) >= 2 else { continue }
            let first = m["firstFrame"] as! Int, last = m["lastFrame"] as! Int
            #expect(numbers.contains(first) && numbers.contains(last))
            ranges.append(first...last)
        }
        #expect(ranges.count == 52)  // the sample's partial messages, both ways
        #expect(numbers.allSatisfy { n in ranges.contains { $0.contains(n) } })
        #expect(result.stderr.contains("\(exported.count) frames of the selected messages written to"))
    }

    @Test func aConnectionAndATypeByNameNarrowTheExport() throws {
        let capture = ExportCLITests.corpus + "/mqtt-big-publish.pcap"
        guard FileManager.default.fileExists(atPath: capture) else { return oracleMissing("message export by type: no ../shared/corpus") }
        guard ExportCLITests.tshark != nil else { return oracleMissing("message export: no tshark") }
        let out = scratchDirectory + "framescope-export-\(UUID().uuidString).pcap"
        let result = try cli.run(
            ["analyze", capture, "--dissector", "preset:mqtt", "--export-messages", out, "--export-type", "PUBLISH", "--export-connection", "0", "-o", "/dev/null"])
        #expect(result.status == 0, "\(result.stderr)")
        let exported = try frames(out)
        #expect(!exported.isEmpty)
        // Every exported frame carries (part of) a PUBLISH; tshark sees one in the frames where one starts.
        #expect(try frames(out, filter: "mqtt && !(mqtt.msgtype == 3)").isEmpty)
        #expect(try !frames(out, filter: "mqtt.msgtype == 3").isEmpty)
        #expect(exported.count < (try frames(capture)).count)
    }

    /// `--export-format pdu`: one Wireshark exported-PDU record per message, its bytes alone,
    /// naming its endpoints and the frame that completed it; tshark reads them back.
    @Test func messagesAsExportedPDUsAreTheStreamsBytes() throws {
        guard let tshark = ExportCLITests.tshark else { return oracleMissing("exported PDUs: no tshark") }
        let out = scratchDirectory + "framescope-pdu-\(UUID().uuidString).pcap"
        let messages = scratchDirectory + "framescope-pdu-\(UUID().uuidString).ndjson"
        let streams = cli.temporaryDirectory()
        let result = try cli.run(
            ["analyze", CLITests.sample, "--dissector", "varint", "--export-messages", out, "--export-format", "pdu", "--messages", messages, "-o", "/dev/null"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("220 messages written to"))
        #expect(try cli.run(["extract", CLITests.sample, "--out", streams]).status == 0)
        let fields = try cli.run(
            ["-r", out, "-T", "fields", "-e", "exported_pdu.orig_fno", "-e", "tcp.srcport", "-e", "exported_pdu.src_port", "-e", "data.data"], executable: tshark)
        var records: [String: String] = [:]  // "frame port" → hex
        for line in fields.stdout.split(separator: "\n") {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            records["\(f[0]) \(f[2])", default: ""] += f[3]
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: streams).filter { $0.hasSuffix(".bin") }
        var checked = 0
        for line in try String(contentsOfFile: messages, encoding: .utf8).split(separator: "\n") {
            let m = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let up = m["direction"] as? String == "client-to-server"
            let from = up ? CLITests.clientEndpoint : CLITests.serverEndpoint, port = from.split(separator: ":").last!
            let file = try #require(files.first { $0.contains("-" + from.replacingOccurrences(of: ":", with: ".") + "-") }, "\(from)")
            let stream = try Data(contentsOf: URL(fileURLWithPath: streams + "/" + file))
            let offset = m["offset"] as! Int, length = m["length"] as! Int
            let hex = stream[offset..<(offset + length)].map { String(format: "%02x", $0) }.joined()
            #expect(records["\(m["lastFrame"] as! Int) \(port)"]?.contains(hex) == true, "message at \(offset) from \(from)")
            checked += 1
        }
        #expect(checked == 220 && records.count > 0)
    }

    @Test func badSelectionsAreUsageErrors() throws {
        let path = scratchDirectory + "framescope-export-\(UUID().uuidString).pcap"
        let unknown = try cli.run(["analyze", CLITests.sample, "--dissector", "preset:mqtt", "--export-messages", path, "--export-type", "NOPE"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("--export-type NOPE: no such type name in mqtt"))
        let alone = try cli.run(["analyze", CLITests.sample, "--dissector", "varint", "--export-only", "partial"])
        #expect(alone.status == 64)
        #expect(alone.stderr.contains("need --export-messages FILE.pcap"))
        let unwritable = try cli.run(["analyze", CLITests.sample, "--dissector", "varint", "--export-messages", "/nonexistent/x.pcap"])
        #expect(unwritable.status == 64)
        #expect(unwritable.stdout.isEmpty)
    }
}
