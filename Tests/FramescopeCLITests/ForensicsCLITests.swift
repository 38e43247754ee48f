import Foundation
import Testing

/// Malformed headers explained on the recorded samples, and the SPEC next to a wrong one.
@Suite struct ForensicsCLITests {
    func report(_ sample: String, _ spec: String) throws -> [String: Any] {
        let path = CLITests.root.appendingPathComponent(sample).path
        let result = try CLITests().run(["analyze", path, "--dissector", spec, "--format", "json", "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
    }

    /// Seed 002's bug: headers written in host byte order.
    @Test func seed002IsExplained() throws {
        let events = try report("samples/seed-0xff-command.pcap", "length:offset=4,width=4,magic=000000ff,type=8:4")["events"] as! [[String: Any]]
        let malformed = events.filter { $0["kind"] as? String == "malformed" }
        #expect(!malformed.isEmpty)
        for e in malformed {
            #expect((e["looksLike"] as? String)?.contains("magic in little-endian byte order") == true, "\(e)")
            #expect((e["looksLike"] as? String)?.hasSuffix("this sender wrote the header in host order") == true)
        }
    }

    @Test(arguments: [
        ("length:offset=4,width=4,adjust=8", "adjust=0", "length:offset=4,width=4"),
        ("length:offset=3,width=4", "offset=4", "length:offset=4,width=4"),
        ("length:offset=4,width=4,endian=little", "endian=big", "length:offset=4,width=4"),
    ])
    func wrongSpecGetsTheRightOne(spec: String, change: String, right: String) throws {
        let suggestions = try report("samples/seed-8byte-header.pcap", spec)["specSuggestions"] as! [[String: Any]]
        #expect(suggestions.count == 2, "both directions")
        for s in suggestions {
            #expect(s["change"] as? String == change && s["spec"] as? String == right && s["wholeStream"] as? Bool == true, "\(s)")
        }
        #expect(suggestions.map { $0["messages"] as! Int }.sorted() == [15, 120])
    }

    /// The seed's "V0.1" header: its length counts the 12 bytes before the body.
    @Test func lengthThatCountsTheHeader() throws {
        let suggestions = try report("samples/seed-v01-header.pcap", "length:offset=4,width=8,encoding=ascii,magic=56302e31,type=12:8")["specSuggestions"] as! [[String: Any]]
        #expect(!suggestions.isEmpty && suggestions.allSatisfy { $0["change"] as? String == "adjust=-12" && $0["meaning"] as? String == "the length counts the header" })
    }

    /// Where the SPEC is right and the stream has junk, or the framing is right, nothing is suggested.
    @Test(arguments: [
        ("Tests/FramescopeCLITests/Fixtures/recovery/junk.pcap", "varint"),
        ("Tests/FramescopeCLITests/Fixtures/recovery/reconnect.pcap", RecoveryCLITests.lengthSpec),
        ("samples/seed-0xff-command.pcap", "length:offset=4,width=4,magic=000000ff,type=8:4"),
        ("samples/im-varint.pcap", "varint"),
    ])
    func noFalseSuggestion(sample: String, spec: String) throws {
        #expect((try report(sample, spec)["specSuggestions"] as! [Any]).isEmpty)
    }
}
