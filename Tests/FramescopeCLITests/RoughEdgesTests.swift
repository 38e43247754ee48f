import Foundation
import Testing

/// What a new user ran into (issue 17's list): each of these once behaved otherwise.
@Suite struct RoughEdgesTests {
    let cli = CLITests()

    @Test func aPortOutOfRangeIsAUsageError() throws {
        let result = try cli.run(["analyze", CLITests.sample, "--dissector", "70001=varint"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("port 70001") && result.stderr.contains("out of range"))
        #expect(result.stdout.isEmpty)
    }

    @Test func twoSpecsForOnePortAreAUsageErrorNotLastWins() throws {
        let result = try cli.run(["analyze", CLITests.sample, "--dissector", "9000=varint", "--dissector", "9000=lines"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("port 9000 has two SPECs"))
    }

    /// An input that cannot be opened at all gets its one error line and no empty report.
    @Test(arguments: ["empty", "missing", "not-a-capture"])
    func anUnreadableInputPrintsOneLineAndNoReport(kind: String) throws {
        let folder = cli.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/input.pcap"
        switch kind {
        case "empty": FileManager.default.createFile(atPath: path, contents: Data())
        case "not-a-capture": try "hello, world\n".write(toFile: path, atomically: false, encoding: .utf8)
        default: break
        }
        for command in [["analyze", path, "--dissector", "varint"], ["flows", path]] {
            let result = try cli.run(command)
            #expect(result.status == 1)
            #expect(result.stdout.isEmpty, "\(command[0]) printed a report for \(kind)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].hasPrefix("framescope: \(path): cannot read capture: "))
            #expect(lines.first?.components(separatedBy: path).count == 2, "the path once: \(lines)")
        }
        let said = try cli.run(["flows", path]).stderr
        switch kind {
        case "empty": #expect(said.contains("the file is empty"))
        case "missing": #expect(said.contains("No such file or directory"))
        default: #expect(said.contains("not a pcap or pcapng capture"))
        }
    }

    /// With a readable input beside it, the report covers what was read and the error is said.
    @Test func aMissingInputBesideAGoodOneStillGetsAReport() throws {
        let result = try cli.run(["flows", "/nonexistent.pcap", CLITests.sample])
        #expect(result.status == 1)
        #expect(result.stdout.contains("1 connection, "))
        #expect(result.stderr.contains("/nonexistent.pcap: cannot read capture"))
    }

    @Test func countsTakeTheirNounInTheRightNumber() throws {
        let text = try cli.run(["analyze", CLITests.sample, "--dissector", "varint"]).stdout
        #expect(text.hasPrefix("1 connection, 1 dissected"))
        #expect(!text.contains("1 connections") && !text.contains(" 1 segments") && !text.contains(" 1 messages"))
        #expect(try cli.run(["flows", CLITests.sample]).stdout.contains("\n1 connection, "))
    }

    /// A snaplen shorter than the packets is said once, with how many it cut and what that does.
    @Test func aShortSnaplenIsWarnedOnceWithItsCount() throws {
        let folder = cli.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let capture = folder + "/cut.pcap"
        #expect(try cli.run(["synth", "-o", capture, "--framing", "varint", "--flows", "4", "--size", "200K", "--snaplen", "200"]).status == 0)
        let text = try cli.run(["analyze", capture, "--dissector", "varint"]).stdout
        let warnings = text.split(separator: "\n").filter { $0.contains("snaplen cut") }
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("damaged rather than framed") == true)
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(cli.run(["analyze", capture, "--dissector", "varint", "--format", "json"]).stdout.utf8))
                as? [String: Any])
        let packets = try #require(json["packets"] as? [String: Any])
        let cut = try #require(packets["cutBySnaplen"] as? Int)
        #expect(cut > 0 && (packets["bytesCutBySnaplen"] as? Int ?? 0) > cut)
        #expect(warnings.first?.contains("cut \(cut) TCP segments of") == true)
        // A whole capture says nothing about it.
        #expect(!(try cli.run(["analyze", CLITests.sample, "--dissector", "varint"]).stdout.contains("snaplen")))
    }

    /// Times a person reads carry the date, in ISO 8601 UTC (the sample was recorded on a known day).
    @Test func humanTimesAreISO8601WithTheDate() throws {
        let flows = try cli.run(["flows", CLITests.sample]).stdout.split(separator: "\n")
        #expect(flows[0].contains("FIRST "))
        let iso = #/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/#
        #expect(flows[1].contains(iso))
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(cli.run(["flows", CLITests.sample, "--format", "json"]).stdout.utf8)) as? [String: Any])
        let firstTime = try #require((json["connections"] as? [[String: Any]])?.first?["firstTime"] as? String)
        let first = try #require(Double(firstTime))
        let expected = ISO8601DateFormatter()
        expected.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        #expect(flows[1].contains(expected.string(from: Date(timeIntervalSince1970: (first * 1000).rounded(.down) / 1000))))
        for format in ["text", "markdown", "html"] {
            let out = try cli.run(["analyze", CLITests.sample, "--dissector", "varint", "--format", format]).stdout
            #expect(out.contains(iso), "\(format) has no ISO time")
        }
        // JSON keeps numbers.
        #expect(!(try cli.run(["analyze", CLITests.sample, "--dissector", "varint", "--format", "json"]).stdout.contains(iso)))
    }

    /// Protocol files are checked, and an error names the line at fault (exit 64).
    @Test(arguments: [
        ("name: x\nframing: length\nofset: 4\nwidth: 2\n", "line 3: unknown key 'ofset'"),
        ("spec: varint\ntypes: {1: login}\n", "line 2: 'types: {1: login}' is a YAML flow collection"),
        ("spec: length:offset=0,width=2,type=2:1\ntypes:\n  1: a\n  300: b\n", "line 4: type 300 cannot occur: the type field holds at most 255"),
        ("spec: varint\ntypes:\n  1: login\n", "line 3: names type 1, but 'varint' has no type field"),
        ("spec: varint\n  offset: 4\n", "line 2: 'offset' is indented, but only the entries of 'types:' are"),
        ("name: a\nname: b\nspec: varint\n", "line 2: 'name' is given twice"),
        ("spec: varint\noffset: 4\n", "line 2: 'offset' next to 'spec'"),
        ("framing: length\noffset: 4\nwidth: 9\n", "line 3: "),
        ("{\n  \"name\": \"x\",\n  \"framing\": \"length\",\n  \"offset\": 0,\n  \"widht\": 2\n}\n", "line 5: unknown key 'widht'"),
    ])
    func protocolFileErrorsNameTheLine(file: String, said: String) throws {
        let folder = cli.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/proto.yaml"
        try file.write(toFile: path, atomically: false, encoding: .utf8)
        let result = try cli.run(["analyze", CLITests.sample, "--dissector", "@" + path])
        #expect(result.status == 64)
        #expect(result.stderr.contains("protocol file '\(path)' \(said)"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    /// `analyze --help` shows the SPEC grammar whole and legible at any width: every key, the
    /// presets, three examples with a field after the length, no line broken into blank ones.
    @Test(arguments: [60, 80, 120])
    func theSpecGrammarHelpIsLegible(columns: Int) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLITests.binary)
        process.arguments = ["analyze", "--help"]
        process.environment = ProcessInfo.processInfo.environment.merging(["COLUMNS": String(columns)]) { $1 }
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let help = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let grammar = try #require(help.range(of: "SPEC is one of:")).lowerBound
        let end = try #require(help.range(of: "--messages")).lowerBound
        let text = String(help[grammar..<end])
        for key in ["offset=", "width=", "endian=", "encoding=", "adjust=", "magic=", "type=", "max=", "min=", "preamble=", "headeronly=", "body=", "bodymagic="] {
            #expect(text.contains(key), "\(key) missing at \(columns) columns")
        }
        #expect(text.contains("preset:NAME") && text.contains("postgres") && text.contains("18437"))
        #expect(text.components(separatedBy: "length:offset=").count - 1 >= 4)  // the form and three examples
        let blankLines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().filter { $0.trimmingCharacters(in: .whitespaces).isEmpty }
        #expect(blankLines.count == 1, "blank lines inside the grammar at \(columns) columns")  // the one before the examples
    }

    /// The HTML legend's colours (partial, merged, malformed) are none of the directions' (they
    /// were the same two: a merged bar read as a client one).
    @Test func legendColoursDifferFromDirectionColours() throws {
        let html = try cli.run(["analyze", CLITests.sample, "--dissector", "varint", "--format", "html"]).stdout
        func colour(_ name: String) throws -> String {
            try #require(html.firstMatch(of: try Regex("--\(name):(#[0-9a-f]{6})"))?.output[1].substring.map(String.init))
        }
        let directions = [try colour("s0"), try colour("s1")]
        let kinds = [try colour("partial"), try colour("merged"), try colour("malformed")]
        #expect(Set(kinds).count == 3)
        #expect(Set(kinds).isDisjoint(with: directions), "legend \(kinds), directions \(directions)")
    }
}
