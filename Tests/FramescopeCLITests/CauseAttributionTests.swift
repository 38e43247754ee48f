import Foundation
import Testing

/// Why messages split and glue, held to real recordings where one switch sets the cause
/// (scripts/record-causes.py: Linux TCP in a namespace, loopback at a 1500-byte MTU; the
/// switches of each capture are in Fixtures/causes/causes.json). The shares must move as the
/// switch says.
@Suite struct CauseAttributionTests {
    let cli = CLITests()
    static let folder = CLITests.root.appendingPathComponent("Tests/FramescopeCLITests/Fixtures/causes")

    struct Direction {
        var messages: Int
        var segments: Int
        var partial: Int
        var partialCauses: [String: Int]
        var merged: Int
        var mergedCauses: [String: Int]
        var overMSS: Int
    }

    /// The client's direction (the one that writes) of a recording, and the report's warnings.
    func client(_ name: String, _ extra: [String] = []) throws -> (Direction, warnings: [String]) {
        let path = Self.folder.appendingPathComponent(name + ".pcap").path
        let result = try cli.run(["analyze", path, "--dissector", "varint", "--format", "json"] + extra)
        #expect(result.status == 0, "\(name): \(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let f = try #require((json["totals"] as? [String: Any])?["clientToServer"] as? [String: Any])
        #expect(json["eventsTotal"] as? Int == 0, "\(name): the recording frames cleanly")
        let direction = Direction(
            messages: f["messages"] as! Int, segments: f["segments"] as! Int, partial: f["partialMessages"] as! Int,
            partialCauses: f["partialCauses"] as! [String: Int], merged: f["mergedSegments"] as! Int,
            mergedCauses: f["mergedCauses"] as! [String: Int], overMSS: f["segmentsOverMSS"] as! Int)
        #expect(direction.partialCauses.values.reduce(0, +) == direction.partial, "\(name): every partial message has one cause")
        #expect(direction.mergedCauses.values.reduce(0, +) == direction.merged, "\(name): every merged segment has one cause")
        return (direction, json["warnings"] as? [String] ?? [])
    }

    @Test func theSwitchesAreRecordedBesideTheCaptures() throws {
        let switches = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: Self.folder.appendingPathComponent("causes.json"))) as? [String: [String: Any]])
        #expect(switches["nagle-two-writes"]?["nodelay"] as? Bool == false)
        #expect(switches["nodelay-two-writes"]?["nodelay"] as? Bool == true)
        #expect(switches["offload-on"]?["offload"] as? Bool == true)
        #expect(switches["offload-off"]?["offload"] as? Bool == false)
    }

    /// A header and a body in two send()s: every message is split, by the application, with
    /// Nagle on or off (Nagle only delays the body until the header's ACK).
    @Test(arguments: ["nodelay-two-writes", "nagle-two-writes"])
    func twoWritesAreTheApplicationsSplits(name: String) throws {
        let (d, _) = try client(name)
        #expect(d.messages == 40)
        #expect(d.partial == d.messages)
        #expect(d.partialCauses == ["writes": d.partial])
    }

    /// Bursts of one small message per send() to a receiver that delays its ACKs: with Nagle
    /// on, the held writes go together on the ACK; with TCP_NODELAY nothing is held.
    @Test func nagleGluesSmallWritesAndNodelayDoesNot() throws {
        let (nagle, _) = try client("nagle-small-writes")
        #expect(nagle.merged >= 10, "a merge per burst of ten, give or take")
        #expect(nagle.mergedCauses["nagle", default: 0] * 10 >= nagle.merged * 9, "\(nagle.mergedCauses)")
        #expect(nagle.partial == 0)
        let (nodelay, _) = try client("nodelay-small-writes")
        #expect(nodelay.mergedCauses["nagle"] == nil)
        #expect(nodelay.merged * 10 <= nodelay.segments, "TCP_NODELAY sends each write at once")
        #expect(nodelay.partial == 0)
    }

    /// Three messages in one send(): every segment is glued, by the application.
    @Test func severalMessagesInOneWriteAreTheApplications() throws {
        let (d, _) = try client("one-write-three-messages")
        #expect(d.merged == d.messages / 3)
        #expect(d.mergedCauses == ["writes": d.merged])
        #expect(d.partial == 0)
    }

    /// One send() per message, spaced: above the MSS every message is split by it, below
    /// nothing is split or glued.
    @Test func messagesAboveTheMSSAreSplitByIt() throws {
        let (above, _) = try client("above-mss")
        #expect(above.partial == above.messages)
        #expect(above.partialCauses == ["mss": above.partial])
        let (below, _) = try client("below-mss")
        #expect(below.partial == 0 && below.merged == 0)
    }

    /// A receiver with a small buffer that reads slowly: the size of segments is the network's
    /// doing (the MSS or the window), never the application's or Nagle's.
    @Test func aSmallWindowIsNeverBlamedOnTheApplication() throws {
        let (d, _) = try client("small-window")
        #expect(d.partial > 0 && d.merged > 0)
        #expect(Set(d.partialCauses.keys).isSubset(of: ["mss", "window"]), "\(d.partialCauses)")
        #expect(Set(d.mergedCauses.keys).isSubset(of: ["mss", "window"]), "\(d.mergedCauses)")
        #expect(d.mergedCauses["window", default: 0] + d.partialCauses["window", default: 0] > 0, "segments end at the window's edge")
    }

    /// Offload on: the capture point sees one super-segment per write, so no message looks
    /// split; offload is named, and `--mss` re-cuts the segments into what the offload-off
    /// recording of the same writes carried.
    @Test func offloadIsNamedAndMSSRecutsAsTheWire() throws {
        let (on, warnings) = try client("offload-on")
        #expect(on.overMSS == on.segments && on.partial == 0)
        #expect(warnings.contains { $0.contains("segmentation offload") && $0.contains("--mss") })
        let (off, offWarnings) = try client("offload-off")
        #expect(off.overMSS == 0 && !offWarnings.contains { $0.contains("offload") })
        let (recut, recutWarnings) = try client("offload-on", ["--mss", "1448"])
        #expect(recutWarnings.contains { $0.hasPrefix("--mss 1448:") })
        #expect(recut.partial == off.partial && recut.partial == recut.messages)
        #expect(recut.partialCauses == off.partialCauses)
        // The segments of a bulk stream depend on timing (a few full ones carry two messages'
        // bytes): within a tenth.
        #expect(abs(recut.segments - off.segments) * 10 <= off.segments, "\(recut.segments) re-cut, \(off.segments) on the wire")
    }

    /// With `--mss` the report shows both figures in one run: the re-cut ones, and under
    /// `asCaptured` exactly what a run without `--mss` reports, on every recording (re-cut or
    /// not) and both directions.
    @Test(arguments: ["offload-on", "offload-off", "above-mss", "small-window", "nagle-small-writes", "one-write-three-messages"])
    func mssShowsTheFiguresAsCapturedBesideTheRecut(_ name: String) throws {
        let path = Self.folder.appendingPathComponent(name + ".pcap").path
        func totals(_ extra: [String]) throws -> [String: Any] {
            let result = try cli.run(["analyze", path, "--dissector", "varint", "--format", "json"] + extra)
            try cli.expectValidReport(result.stdout)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            return try #require(json["totals"] as? [String: Any])
        }
        let plain = try totals([]), recut = try totals(["--mss", "536"])
        for key in ["clientToServer", "serverToClient", "all"] {
            let mine = try #require(plain[key] as? [String: Any]), theirs = try #require(recut[key] as? [String: Any])
            #expect(mine["asCaptured"] == nil)
            let asCaptured = try #require(theirs["asCaptured"] as? [String: Any], "\(name) \(key)")
            for figure in ["segments", "partialMessages", "mergedSegments", "naiveReaderLoss"] {
                #expect(asCaptured[figure] as? Int == mine[figure] as? Int, "\(name) \(key) \(figure)")
            }
            for figure in ["partialCauses", "mergedCauses"] {
                #expect(asCaptured[figure] as? [String: Int] == mine[figure] as? [String: Int], "\(name) \(key) \(figure)")
            }
        }
        let text = try cli.run(["analyze", path, "--dissector", "varint", "--mss", "536"]).stdout
        #expect(text.contains("as captured (without --mss): "))
    }

    @Test func textReportSaysWhy() throws {
        let path = Self.folder.appendingPathComponent("nagle-small-writes.pcap").path
        let result = try cli.run(["analyze", path, "--dissector", "varint"])
        #expect(result.stdout.contains("why: 100% Nagle (small writes held until the ACK, sent together)"))
        #expect(result.stdout.contains("carries bytes of 9 messages; why: Nagle"))
    }

    @Test func aBadMSSIsAUsageError() throws {
        let result = try cli.run(["analyze", CLITests.sample, "--dissector", "varint", "--mss", "10"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--mss must be 64…65535 bytes"))
    }
}
