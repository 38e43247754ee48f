import Foundation
import Testing

/// Output files appear under their names only when complete: a run killed midway leaves the
/// previous file or none (its temporary `.NAME.PID.N` may stay behind), and a destination that
/// cannot be written fails before any work.
@Suite struct OutputSafetyTests {
    let cli = CLITests()

    func files(in folder: String) -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted() }

    @Test func aKilledRunLeavesThePreviousReportAndNoPartialFile() throws {
        let folder = cli.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let capture = folder + "/big.pcap"
        let synth = try cli.run(["synth", "-o", capture, "--framing", "varint", "--flows", "50", "--size", "60M"])
        #expect(synth.status == 0, "\(synth.stderr)")
        #expect(files(in: folder) == ["big.pcap", "big.pcap.truth.json"])  // no temporary left by a finished run
        let report = folder + "/report.json", messages = folder + "/messages.ndjson"
        try "previous".write(toFile: report, atomically: false, encoding: .utf8)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLITests.binary)
        process.arguments = ["analyze", capture, "--dissector", "varint", "--format", "json", "-o", report, "--messages", messages, "--quiet"]
        try process.run()
        // Kill it once the messages file is being written under its temporary name.
        var writing = false
        for _ in 0..<3000 where process.isRunning {
            let temporary = files(in: folder).first { $0.hasPrefix(".messages.ndjson.") }
            if let temporary, let size = try? FileManager.default.attributesOfItem(atPath: folder + "/" + temporary)[.size] as? Int, size > 0 {
                writing = true
                break
            }
            usleep(5_000)
        }
        #expect(writing, "the run ended before it could be killed")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
        #expect(try String(contentsOfFile: report, encoding: .utf8) == "previous")
        #expect(!FileManager.default.fileExists(atPath: messages))

        // Run to the end, the same outputs are whole and the temporaries are gone.
        let done = try cli.run(["analyze", capture, "--dissector", "varint", "--format", "json", "-o", report, "--messages", messages, "--quiet"])
        #expect(done.status == 0, "\(done.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
        #expect(json["schema"] as? String == "framescope.report/4")
        let lines = try String(contentsOfFile: messages, encoding: .utf8).split(separator: "\n")
        let totals = try #require(json["totals"] as? [String: Any])
        #expect(lines.count == (totals["all"] as? [String: Any])?["messages"] as? Int)
        #expect(files(in: folder).filter { !$0.hasPrefix(".") } == ["big.pcap", "big.pcap.truth.json", "messages.ndjson", "report.json"])
    }

    @Test func anUnwritableDestinationFailsBeforeTheAnalysis() throws {
        let started = Date()
        let result = try cli.run(["analyze", CLITests.sample, "--dissector", "varint", "-o", "/nonexistent-folder/report.txt"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("/nonexistent-folder/report.txt") && result.stderr.contains("cannot write"))
        #expect(Date().timeIntervalSince(started) < 30)
        let folder = cli.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let intoFolder = try cli.run(["flows", CLITests.sample, "-o", folder])
        #expect(intoFolder.status == 64 && intoFolder.stderr.contains("is a directory"))
    }

    @Test func extractedStreamsAreRenamedWhenTheirConnectionEnds() throws {
        let out = cli.temporaryDirectory()
        let result = try cli.run(["extract", CLITests.sample, "--out", out])
        #expect(result.status == 0, "\(result.stderr)")
        let names = files(in: out)
        #expect(names.filter { $0.hasSuffix(".bin") }.count == 2)
        #expect(!names.contains { $0.hasSuffix(".partial") || $0.hasPrefix(".") })
    }

    @Test func writingToStandardOutputByNameWritesInPlace() throws {
        let result = try cli.run(["flows", CLITests.sample, "-o", "/dev/stdout"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("1 connection,"))
    }
}
