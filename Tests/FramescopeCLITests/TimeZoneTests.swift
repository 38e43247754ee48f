import Foundation
import Testing

/// Human times are in the capture's own time zone where its pcapng names one (`if_iana_tzname`),
/// with the offset, in text, Markdown, HTML and the `flows` table; JSON keeps epoch seconds and
/// says the zone under `inputs`. Fixtures: samples/lines-crlf.pcap rewritten by
/// scripts/pcapng-timezone.py (little- and big-endian sections, and a zone no tzdata has).
@Suite struct TimeZoneTests {
    let cli = CLITests()
    static let folder = CLITests.root.appendingPathComponent("Tests/FramescopeCLITests/Fixtures/timezone")

    /// tshark, run in the zone (`TZ=`, `-t ad`), prints the first packet's local time: the
    /// oracle for the offset framescope reads from tzdata.
    @Test(arguments: [("shanghai", "Asia/Shanghai", "+08:00"), ("new-york-big-endian", "America/New_York", "-05:00")])
    func timesAreInTheZoneThePcapngNames(_ name: String, _ zone: String, _ offset: String) throws {
        let path = Self.folder.appendingPathComponent(name + ".pcapng").path
        let text = try cli.run(["analyze", path, "--dissector", "lines"]).stdout
        let traffic = try #require(text.split(separator: "\n").first { $0.hasPrefix("traffic from ") }.map(String.init))
        #expect(traffic.hasSuffix(", \(zone) (the capture's time zone)"), "\(traffic)")
        let first = String(traffic.dropFirst("traffic from ".count).prefix(29))
        #expect(first.hasSuffix(offset), "\(first)")
        if let tshark = ExportCLITests.tshark {
            let script = "TZ=\(zone) \(tshark) -r '\(path)' -c 1 -t ad -T fields -e _ws.col.Time"
            let theirs = try cli.run(["-c", script], executable: "/bin/sh").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            // "2026-11-21 17:35:54.316067" against "2026-11-21T17:35:54.316+08:00": to the millisecond.
            #expect(theirs.prefix(23).replacingOccurrences(of: " ", with: "T") == first.prefix(23), "\(theirs) against \(first)")
        } else {
            oracleMissing("time zones: no tshark")
        }
        for format in ["markdown", "html"] {
            let out = try cli.run(["analyze", path, "--dissector", "lines", "--format", format]).stdout
            #expect(out.contains(first) && out.contains(zone), "\(format)")
        }
        let flows = try cli.run(["flows", path]).stdout
        #expect(flows.contains(first) && flows.contains("times in \(zone) (the capture's time zone)"))
        let json = try cli.run(["analyze", path, "--dissector", "lines", "--format", "json"]).stdout
        try cli.expectValidReport(json)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect((report["inputs"] as? [[String: Any]])?.first?["timeZone"] as? String == zone)
        // The same packets as pcap, which names no zone, stay in UTC.
        let utc = try cli.run(["analyze", CLITests.root.appendingPathComponent("samples/lines-crlf.pcap").path, "--dissector", "lines"]).stdout
        #expect(utc.contains("Z (0.253 s), UTC\n"))
    }

    @Test func aZoneTheSystemDoesNotKnowLeavesUTCAndSaysSo() throws {
        let path = Self.folder.appendingPathComponent("unknown-zone.pcapng").path
        let text = try cli.run(["analyze", path, "--dissector", "lines"]).stdout
        #expect(text.contains("Z (0.253 s), UTC (the capture names Mars/Olympus_Mons, which this system's tzdata does not have)"))
    }
}
