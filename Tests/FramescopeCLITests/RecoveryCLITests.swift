import Foundation
import Testing

/// Captures that break "the capture holds whole connections with clean framing", written by
/// `framescope synth` with the truth it emits (FILE.truth.json, every message in
/// FILE.messages.ndjson): analyze must never report a message that is not one, find the messages
/// that follow each boundary it finds, and count junk as junk.
@Suite struct RecoveryCLITests {
    static let directory = CLITests.root.appendingPathComponent("Tests/FramescopeCLITests/Fixtures/recovery").path
    static let lengthSpec = "length:offset=8,width=4,magic=cafef00d,type=4:4"

    struct Case: CustomStringConvertible, Sendable {
        var name: String
        var synth: [String]
        var spec: String
        var description: String { name }
    }

    static let cases = [
        Case(name: "late-start", synth: ["--seed", "21", "--late-start"], spec: "varint"),
        Case(name: "junk", synth: ["--seed", "22", "--junk", "0.1"], spec: "varint"),
        Case(name: "reconnect", synth: ["--seed", "23", "--framing", "length", "--connection-size", "24K", "--reconnect", "0.6"], spec: lengthSpec),
        Case(name: "snaplen", synth: ["--seed", "24", "--snaplen", "200"], spec: "varint"),
    ]

    struct Truth {
        var directions: [String: [String: Int]]
        var messages: Set<String>
        func sum(_ key: String) -> Int { directions.values.reduce(0) { $0 + $1[key]! } }
    }

    static func truth(_ c: Case) throws -> Truth {
        let path = "\(directory)/\(c.name).pcap"
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path + ".truth.json"))) as! [String: Any]
        let lines = try String(contentsOfFile: path + ".messages.ndjson", encoding: .utf8).split(separator: "\n")
        let messages = try lines.map { line -> String in
            let m = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            return "\(m["clientPort"]!) \(m["direction"]!) \(m["offset"]!) \(m["length"]!)"
        }
        return Truth(directions: json["directions"] as! [String: [String: Int]], messages: Set(messages))
    }

    struct Analysis {
        var totals: [String: Any]
        var directions: [String: [String: Any]]
        var messages: [String]
    }

    func analyze(_ c: Case) throws -> Analysis {
        let out = scratchDirectory + "framescope-recovery-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: out + ".json"); try? FileManager.default.removeItem(atPath: out + ".ndjson") }
        let result = try CLITests().run([
            "analyze", "\(Self.directory)/\(c.name).pcap", "--dissector", c.spec, "--format", "json", "--quiet", "-o", out + ".json",
            "--messages", out + ".ndjson",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + ".json"))) as! [String: Any]
        let ports = Dictionary(uniqueKeysWithValues: (report["connections"] as! [[String: Any]]).map {
            ($0["id"] as! Int, ($0["client"] as! String).split(separator: ":").last!)
        })
        let messages = try String(contentsOfFile: out + ".ndjson", encoding: .utf8).split(separator: "\n").map { line -> String in
            let m = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            return "\(ports[m["connection"] as! Int]!) \(m["direction"]!) \(m["offset"]!) \(m["length"]!)"
        }
        let totals = report["totals"] as! [String: Any]
        return Analysis(
            totals: totals["all"] as! [String: Any], directions: totals.compactMapValues { $0 as? [String: Any] }, messages: messages)
    }

    func int(_ totals: [String: Any], _ key: String) -> Int { totals[key] as! Int }

    /// The fixtures are what synth writes today with the options above.
    @Test(arguments: cases) func fixturesAreWhatSynthWrites(c: Case) throws {
        let out = scratchDirectory + "framescope-synth-\(UUID().uuidString).pcap"
        defer { for suffix in ["", ".truth.json", ".messages.ndjson"] { try? FileManager.default.removeItem(atPath: out + suffix) } }
        let result = try CLITests().run(["synth", "--size", "256K", "--flows", "6", "--truth-messages", "-o", out] + c.synth)
        #expect(result.status == 0, "\(result.stderr)")
        for suffix in ["", ".truth.json", ".messages.ndjson"] {
            #expect(FileManager.default.contentsEqual(atPath: out + suffix, andPath: "\(Self.directory)/\(c.name).pcap\(suffix)"), "\(c.name)\(suffix)")
        }
    }

    /// Every message reported is a message of the truth; none is counted inside junk or a tail.
    @Test(arguments: cases) func noFalseMessage(c: Case) throws {
        let truth = try Self.truth(c)
        let analysis = try analyze(c)
        let bogus = analysis.messages.filter { !truth.messages.contains($0) }
        #expect(bogus.isEmpty, "\(c.name): \(bogus.count) messages that are not in the truth: \(bogus.prefix(5))")
        let protobuf = analysis.totals["protobuf"] as? [String: Any]
        #expect((protobuf?["invalid"] as? Int ?? 0) == 0, "\(c.name): bodies that are not protobuf were framed")
    }

    /// Per direction: never more messages than were sent whole, no more malformed events than junk
    /// regions, at least the junk and the leading tails uncounted as messages.
    @Test(arguments: cases) func eachDirectionIsBoundedByTheTruth(c: Case) throws {
        let truth = try Self.truth(c), analysis = try analyze(c)
        for (name, want) in truth.directions {
            let got = analysis.directions[name]!
            #expect(int(got, "messages") <= want["messages"]!, "\(c.name) \(name) messages")
            #expect(int(got, "malformed") <= want["junkRegions"]!, "\(c.name) \(name) malformed")
            #expect(int(got, "undissectedBytes") >= want["junkBytes"]!, "\(c.name) \(name) undissected")
            #expect(int(got, "leadingBytes") >= want["leadingBytes"]!, "\(c.name) \(name) leading")
            #expect(int(got, "partialMessages") <= want["partial"]!, "\(c.name) \(name) partial")
        }
    }

    @Test func aLateStartFindsTheMessagesAfterTheFirstBoundaries() throws {
        let c = Self.cases[0], truth = try Self.truth(c), a = try analyze(c).totals
        let messages = int(a, "messages")
        // The first messages of a write that began before the capture may be left out (a false
        // start chains into them as often as not); at most one write's worth per direction.
        #expect(messages <= truth.sum("messages") && messages >= truth.sum("messages") * 9 / 10, "\(messages) of \(truth.sum("messages"))")
        #expect(int(a, "malformed") == 0 && int(a, "undissectedBytes") == 0)
        #expect(int(a, "leadingBytes") >= truth.sum("leadingBytes"))
        #expect((a["boundaryEvidenceBits"] as? Double ?? 0) >= 16)
    }

    @Test func junkIsOneMalformedRegionAndNoMessage() throws {
        let c = Self.cases[1], truth = try Self.truth(c), a = try analyze(c).totals
        let messages = int(a, "messages")
        #expect(messages <= truth.sum("messages") && messages >= truth.sum("messages") * 85 / 100, "\(messages) of \(truth.sum("messages"))")
        // One event per region (two regions close together are one).
        #expect(int(a, "malformed") <= truth.sum("junkRegions") && int(a, "malformed") >= truth.sum("junkRegions") - 1)
        #expect(int(a, "undissectedBytes") >= truth.sum("junkBytes"))
    }

    @Test func aClientThatResendsItsTailOnANewConnection() throws {
        let c = Self.cases[2], truth = try Self.truth(c), a = try analyze(c).totals
        #expect(truth.sum("junkRegions") == 4 && truth.sum("incomplete") == 4)
        #expect(int(a, "malformed") == truth.sum("junkRegions"))
        #expect(int(a, "incompleteAtEnd") == truth.sum("incomplete"))
        // One resent tail is followed by a single message before the connection ends: too
        // little to tell it from junk.
        #expect(int(a, "messages") == truth.sum("messages") - 1)
        #expect(int(a, "partialMessages") == truth.sum("partial"))
    }

    @Test func aSnaplenCutIsAGapNotInvalidBodies() throws {
        let c = Self.cases[3], a = try analyze(c).totals
        #expect(int(a, "damagedByGaps") > 0)
        #expect(int(a, "malformed") == 0)
    }
}
