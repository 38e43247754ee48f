import Foundation
import Testing

@Suite struct AnalyzeCLITests {
    let cli = CLITests()
    static let samples = CLITests.root.appendingPathComponent("samples")

    @Test func analyzePrintsTheVerdictFirst() throws {
        let result = try cli.run(["analyze", CLITests.sample, "--dissector", "varint"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines[0].hasPrefix("1 connection, 1 dissected with varint"))
        #expect(result.stdout.contains("server → client: 200 messages"))
        #expect(result.stdout.contains("a one-read-one-message receiver would lose"))
        #expect(result.stdout.contains("arrive split across segments"))
        #expect(!result.stdout.contains("warning:"))
    }

    @Test func malformedHeadersComeWithEvidence() throws {
        let path = Self.samples.appendingPathComponent("seed-0xff-command.pcap").path
        let result = try cli.run(["analyze", path, "--dissector", "length:offset=4,width=4,magic=000000ff,type=8:4"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("2 malformed (bad-magic 2)"))
        #expect(result.stdout.contains("malformed (bad-magic): #0"))
        #expect(result.stdout.contains("wireshark: tcp.stream == 0 && frame.number == "))
        #expect(result.stdout.contains("bytes: ff 00 00 00"))  // the host-order 0xff of seed 002
    }

    @Test func jsonReportFollowsTheSchema() throws {
        let result = try cli.run(["analyze", CLITests.sample, "--dissector", "varint", "--format", "json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(json["schema"] as? String == "framescope.report/4")
        let direction = try #require(((json["connections"] as? [[String: Any]])?.first?["directions"] as? [[String: Any]])?.last)
        #expect(Set(direction.keys).subtracting(["timeline", "messageTypes", "tcp"]) == ["bytes", "figures"])  // no gaps: no gapBytes
        let figures = try #require(direction["figures"] as? [String: Any])
        #expect(figures["messages"] as? Int == 200)
        #expect(figures["malformed"] == nil)  // a connection's zero figures are left out
        // …and what its other figures say: the percentages
        #expect(figures["partialMessages"] != nil && figures["partialPercent"] == nil && figures["naiveReaderLossPercent"] == nil)
        try cli.expectValidReport(result.stdout)
    }

    @Test func messagesFileHasOneLinePerMessage() throws {
        let out = scratchDirectory + "framescope-\(UUID().uuidString).ndjson"
        let result = try cli.run(["analyze", CLITests.sample, "--dissector", "varint", "--messages", out, "--format", "json"])
        #expect(result.status == 0)
        let lines = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 220)
        let first = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        for key in ["connection", "direction", "offset", "length", "type", "firstFrame", "lastFrame", "segments"] { #expect(first[key] != nil) }
    }

    @Test func perPortDissectorsAndProtocolFiles() throws {
        let dir = scratchDirectory + "framescope-proto-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let yaml = dir + "/im.yaml"
        try "name: im-gateway\nspec: length:offset=4,width=4,magic=000000ff,type=8:4\ntypes:\n  100: login\n  101: chat\n".write(toFile: yaml, atomically: true, encoding: .utf8)
        let json = dir + "/im.json"
        try #"{"name": "im-json", "framing": "length", "offset": 4, "width": 4, "magic": "000000ff", "type": "8:4"}"#.write(toFile: json, atomically: true, encoding: .utf8)
        let path = Self.samples.appendingPathComponent("seed-0xff-command.pcap").path
        let viaYAML = try cli.run(["analyze", path, "--dissector", "7010=@\(yaml)", "--format", "json"])
        #expect(viaYAML.status == 0, "\(viaYAML.stderr)")
        #expect(viaYAML.stdout.contains("\"login\"") && viaYAML.stdout.contains("\"dissector\":\"im-gateway\""))
        let viaJSON = try cli.run(["analyze", path, "--dissector", "@\(json)"])
        #expect(viaJSON.stdout.contains("with im-json"))
        let otherPort = try cli.run(["analyze", path, "--dissector", "9999=varint"])
        #expect(otherPort.stdout.contains("no connection matched a dissector"))
    }

    @Test(arguments: [
        (["--dissector", "length:offset=x"], "'offset=x' in 'length:offset=x': expected a whole number"),
        (["--dissector", "preset:nope"], "unknown preset 'nope'"),
        (["--dissector", "@/nonexistent/proto.yaml"], "protocol file '/nonexistent/proto.yaml': cannot read it"),
        (["--dissector", "varint", "--dissector", "lines"], "--dissector given twice without a port"),
    ])
    func badSpecsGiveOneClearLine(arguments: [String], message: String) throws {
        let result = try cli.run(["analyze", CLITests.sample] + arguments)
        #expect(result.status == 64)
        #expect(result.stderr == "framescope: \(result.stderr.dropFirst("framescope: ".count))")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stdout.isEmpty)
    }

    @Test func aMissingDissectorIsAUsageError() throws {
        let result = try cli.run(["analyze", CLITests.sample])
        #expect(result.status == 64)
        #expect(result.stderr.contains("give --dissector SPEC"))
    }
}

@Suite struct ThreadsAndSynthTests {
    let cli = CLITests()

    @Test func oneAndTwoThreadsGiveIdenticalReports() throws {
        let path = CLITests.root.appendingPathComponent("samples/seed-0xff-command.pcap").path
        let spec = "length:offset=4,width=4,magic=000000ff,type=8:4"
        let one = try cli.run(["analyze", path, "--dissector", spec, "--format", "json", "-t", "1"])
        let two = try cli.run(["analyze", path, "--dissector", spec, "--format", "json", "-t", "2"])
        #expect(one.status == 0 && two.status == 0)
        #expect(one.stdout == two.stdout)
        #expect(try cli.run(["flows", path, "-t", "1"]).stdout == cli.run(["flows", path, "-t", "2"]).stdout)
    }

    /// Each framing, and over IPv6 (`--ipv6`: the connections' endpoints in 2001:db8::/32).
    @Test(arguments: [["varint"], ["length"], ["lines"], ["varint", "--ipv6"]])
    func aSyntheticCaptureAnalyzesToItsTruth(framing: [String]) throws {
        let path = scratchDirectory + "framescope-synth-\(UUID().uuidString).pcap"
        let made = try cli.run(["synth", "--size", "3M", "--flows", "40", "--framing", framing[0], "--seed", "7", "-o", path] + framing.dropFirst())
        #expect(made.status == 0, "\(made.stderr)")
        let truth = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path + ".truth.json"))) as? [String: Any])
        #expect(truth["outOfOrderSegments"] as? Int ?? 0 > 0 && truth["retransmittedSegments"] as? Int ?? 0 > 0)
        let report = try cli.run(["analyze", path, "--dissector", truth["spec"] as! String, "--format", "json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any])
        let totals = try #require(json["totals"] as? [String: Any])
        let up = try #require(totals["clientToServer"] as? [String: Any]), down = try #require(totals["serverToClient"] as? [String: Any])
        #expect(up["messages"] as? Int == truth["messagesClientToServer"] as? Int)
        #expect(down["messages"] as? Int == truth["messagesServerToClient"] as? Int)
        #expect((totals["all"] as? [String: Any])?["malformed"] as? Int == 0)
        #expect(totals["connections"] as? Int == truth["connections"] as? Int)
        let first = try #require((json["connections"] as? [[String: Any]])?.first)
        let ipv6 = framing.contains("--ipv6")
        #expect((first["client"] as? String)?.hasPrefix(ipv6 ? "[2001:db8::a01:" : "10.1.0.0:") == true, "\(first)")
        #expect(first["server"] as? String == (ipv6 ? "[2001:db8::a00:1]:9000" : "10.0.0.1:9000"))
    }
}

@Suite struct FailOnTests {
    let cli = CLITests()
    static let seed = CLITests.root.appendingPathComponent("samples/seed-0xff-command.pcap").path
    static let spec = "length:offset=4,width=4,magic=000000ff,type=8:4"

    static let cases: [(conditions: [String], status: Int32)] = [
        (["malformed"], 3), (["incomplete"], 0), (["naive-loss>1%"], 3), (["naive-loss>99%"], 0),
        (["partial>=10%"], 3), (["merged>1000"], 0), (["messages=132"], 3), (["malformed<1"], 0), (["gaps"], 0),
        (["incomplete", "malformed"], 3),
    ]

    @Test(arguments: cases.indices)
    func exitStatusFollowsTheConditions(index: Int) throws {
        let (conditions, status) = Self.cases[index]
        let result = try cli.run(["analyze", Self.seed, "--dissector", Self.spec] + conditions.flatMap { ["--fail-on", $0] })
        #expect(result.status == status, "\(conditions): \(result.stderr)")
        if status == 3 {
            #expect(result.stderr.contains("framescope: --fail-on"))
            #expect(result.stdout.contains("messages in"))  // the report is still written
        } else {
            #expect(result.stderr.isEmpty)
        }
    }

    @Test func aBadConditionIsAUsageError() throws {
        for bad in ["frobs", "partial>", "malformed>1%", "naive-loss>>1"] {
            let result = try cli.run(["analyze", Self.seed, "--dissector", Self.spec, "--fail-on", bad])
            #expect(result.status == 64, "\(bad)")
        }
    }

    @Test func anInputErrorWinsOverAFailOnCondition() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: Self.seed))
        let path = scratchDirectory + "framescope-failon-\(UUID().uuidString).pcap"
        try data.dropLast(30).write(to: URL(fileURLWithPath: path))
        let result = try cli.run(["analyze", path, "--dissector", Self.spec, "--fail-on", "malformed"])
        #expect(result.status == 1)
    }
}

@Suite struct MarkdownReportTests {
    let cli = CLITests()
    static let seeds: [(String, String)] = [
        ("im-varint", "varint"), ("seed-0xff-command", "length:offset=4,width=4,magic=000000ff,type=8:4"),
        ("seed-7byte-header", "length:offset=5,width=2,type=2:2"), ("seed-ascii10-header", "length:offset=6,width=4,encoding=ascii"),
        ("seed-v01-header", "length:offset=4,width=8,encoding=ascii,adjust=-12,magic=56302e31,type=12:8"),
        ("seed-8byte-header", "length:offset=4,width=4"), ("lines-crlf", "delimiter"), ("im-protobuf", "varint"),
    ]

    /// Arguments beyond the SPEC: im-protobuf is decoded with its schema (samples/proto/chat.proto).
    static func extra(_ name: String) throws -> [String] {
        name == "im-protobuf" ? ["--proto-descriptor", try ProtobufCLITests.chatDescriptor(), "--message", "framescope.samples.Envelope", "--count-by", "cmd"] : []
    }

    @Test(arguments: seeds.indices)
    func markdownCarriesTheJSONFigures(index: Int) throws {
        let (name, spec) = Self.seeds[index]
        let path = CLITests.root.appendingPathComponent("samples/\(name).pcap").path
        let extra = try Self.extra(name)
        let markdown = try cli.run(["analyze", path, "--dissector", spec, "--format", "markdown"] + extra)
        let json = try cli.run(["analyze", path, "--dissector", spec, "--format", "json"] + extra)
        #expect(markdown.status == 0 && json.status == 0)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let totals = try #require(report["totals"] as? [String: Any])
        #expect(markdown.stdout.hasPrefix("## framescope: how TCP cut and glued the messages"))
        for (label, key) in [("client → server", "clientToServer"), ("server → client", "serverToClient")] {
            let f = try #require(totals[key] as? [String: Any])
            let messages = f["messages"] as! Int
            guard messages > 0 else { continue }
            #expect(markdown.stdout.contains("**\(label):**") && markdown.stdout.contains("of \(messages) messages arrive split"), "\(name) \(label)")
            let loss = f["naiveReaderLoss"] as! Int
            #expect(markdown.stdout.contains("| naive-reader loss |") && markdown.stdout.contains("\(loss) ("), "\(name) \(label)")
        }
        #expect(markdown.stdout.contains("**Segments per message**") && markdown.stdout.contains("│ █"))
        #expect(markdown.stdout.contains("**Message sizes (powers of two)**"))
        let timelines = (report["connections"] as? [[String: Any]] ?? []).flatMap { c in
            (c["directions"] as? [[String: Any]] ?? []).compactMap { $0["timeline"] as? [String: Any] }
        }
        let anyTimeline = !timelines.isEmpty
        // Listed only where events span buckets: one bucket would say the direction's totals again.
        #expect(timelines.allSatisfy { ($0["merged"] as? [Int])?.count ?? 0 > 1 }, "\(name): a timeline of one bucket")
        #expect(markdown.stdout.contains("**Over time**") == anyTimeline, "\(name): a timeline when the JSON has one")
        if (report["eventsTotal"] as? Int ?? 0) > 0 {
            #expect(markdown.stdout.contains("Wireshark: `tcp.stream == "))
        }
    }
}

@Suite struct ProtobufCLITests {
    let cli = CLITests()
    static let sample = CLITests.root.appendingPathComponent("samples/im-protobuf.pcap").path

    /// samples/proto/chat.proto compiled by protoc, as the README tells users to.
    static func chatDescriptor() throws -> String {
        let path = scratchDirectory + "framescope-chat-\(ProcessInfo.processInfo.processIdentifier).pb"
        if FileManager.default.fileExists(atPath: path) { return path }
        let protoc = try #require(["/usr/bin/protoc", "/usr/local/bin/protoc"].first { FileManager.default.isExecutableFile(atPath: $0) }, "protoc is missing (scripts/install-deps --test)")
        let directory = CLITests.root.appendingPathComponent("samples/proto").path
        let result = try CLITests().run(["--descriptor_set_out=\(path).tmp", "--include_imports", "-I", directory, directory + "/chat.proto"], executable: protoc)
        #expect(result.status == 0, "\(result.stderr)")
        try? FileManager.default.moveItem(atPath: path + ".tmp", toPath: path)
        return path
    }

    func report(_ arguments: [String]) throws -> [String: Any] {
        let result = try cli.run(["analyze", Self.sample, "--dissector", "varint", "--format", "json"] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    @Test func theSchemaCountsByCommandAndReportsBodiesThatDoNotParse() throws {
        let r = try report(["--proto-descriptor", try Self.chatDescriptor(), "--message", "framescope.samples.Envelope", "--count-by", "cmd"])
        let mode = try #require(r["protobuf"] as? [String: Any])
        #expect(mode["mode"] as? String == "schema" && mode["message"] as? String == "framescope.samples.Envelope" && mode["countBy"] as? String == "cmd")
        let down = try #require(((r["totals"] as? [String: Any])?["serverToClient"] as? [String: Any])?["protobuf"] as? [String: Any])
        // The same as Google's protobuf library on these bodies (samples/truth.json; SampleTests pins it per direction).
        #expect(down["checked"] as? Int == 160 && down["invalid"] as? Int == 6)
        #expect(down["counts"] as? [String: Int] == ["ACK": 62, "SEND": 60, "TYPING": 32])
        #expect(down["invalidByReason"] as? [String: Int] == ["invalid-utf8": 4, "length-past-end": 2])
        let events = try #require(r["events"] as? [[String: Any]]).filter { $0["kind"] as? String == "invalid-protobuf" }
        #expect(events.count == 6)
        for e in events {
            let offset = try #require(e["offset"] as? Int), failedAt = try #require(e["failedAt"] as? Int)
            #expect(failedAt >= offset && failedAt < offset + (e["length"] as! Int))
            #expect(e["failedInFrame"] as? Int != nil && (e["wiresharkFilter"] as? String)?.hasPrefix("tcp.stream == 0") == true)
        }
        let text = try cli.run(["analyze", Self.sample, "--dissector", "varint", "--proto-descriptor", try Self.chatDescriptor(), "--message", "framescope.samples.Envelope"])
        let markdown = try cli.run(
            ["analyze", Self.sample, "--dissector", "varint", "--proto-descriptor", try Self.chatDescriptor(), "--message", "framescope.samples.Envelope", "--format", "markdown"])
        #expect(markdown.stdout.contains("6 bodies are not a valid framescope.samples.Envelope"))
        #expect(text.stdout.contains("protobuf: 160 bodies parsed as framescope.samples.Envelope, 6 invalid (3.8%: invalid-utf8 4, length-past-end 2)"))
    }

    @Test func withoutASchemaVarintBodiesAreCheckedAsWireData() throws {
        let r = try report([])
        #expect((r["protobuf"] as? [String: Any])?["mode"] as? String == "wire")
        let down = try #require(((r["totals"] as? [String: Any])?["serverToClient"] as? [String: Any])?["protobuf"] as? [String: Any])
        #expect(down["checked"] as? Int == 160 && down["invalid"] as? Int == 2 && down["counts"] == nil)
        #expect(try report(["--no-check-protobuf"])["protobuf"] == nil)
        let failed = try cli.run(["analyze", Self.sample, "--dissector", "varint", "--fail-on", "invalid-protobuf>1%"])
        #expect(failed.status == 3 && failed.stderr.contains("invalid-protobuf is 1.1%"))
        #expect(try cli.run(["analyze", Self.sample, "--dissector", "varint", "--fail-on", "invalid-protobuf>2"]).status == 0)
    }

    @Test func badSchemaArgumentsAreUsageErrors() throws {
        let pb = try Self.chatDescriptor()
        let cases: [([String], String)] = [
            (["--proto-descriptor", pb], "needs --message"),
            (["--count-by", "cmd"], "need --proto-descriptor"),
            (["--proto-descriptor", "/nonexistent.pb", "--message", "x.Y"], "cannot read the descriptor set"),
            (["--proto-descriptor", Self.sample, "--message", "x.Y"], "not a descriptor set"),
            (["--proto-descriptor", pb, "--message", "Envelope"], "did you mean framescope.samples.Envelope?"),
            (["--proto-descriptor", pb, "--message", "framescope.samples.Envelope", "--count-by", "text"], "not an integer, bool or enum field"),
            (["--proto-descriptor", pb, "--message", "framescope.samples.Envelope", "--count-by", "nope"], "has no field 'nope'"),
        ]
        for (arguments, message) in cases {
            let result = try cli.run(["analyze", Self.sample, "--dissector", "varint"] + arguments)
            #expect(result.status == 64 && result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }
}

