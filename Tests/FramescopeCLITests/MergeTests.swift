import Foundation
import Testing

/// `framescope merge`: the JSON reports of a split capture's shards, merged, are the report of
/// one run over the whole capture — connections with the run's IDs, totals, distributions, TCP,
/// response times, events, examples and warnings — but for what only a single run can know (the
/// inputs it read, its buffers' peak).
@Suite struct MergeTests {
    let cli = CLITests()

    /// A new folder for a test's files.
    func folder() throws -> String {
        let path = cli.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    func json(_ path: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
    }

    /// Where the connections' array is in a report's text.
    func connections(in report: Data) throws -> Range<Data.Index> {
        let start = try #require(report.range(of: Data("\"connections\" : [".utf8))).upperBound
        let end = try #require(report.range(of: Data("\n  ],\n  \"dissectors\"".utf8), in: start..<report.endIndex)).lowerBound
        return start..<end
    }

    /// A report as objects, the `range` (its connections) left out.
    func json(_ report: Data, without range: Range<Data.Index>) throws -> [String: Any] {
        var text = report
        text.replaceSubrange(range, with: Data())
        return try #require(try JSONSerialization.jsonObject(with: text) as? [String: Any])
    }

    /// The members a merged report must share with the single run's, as canonical text each.
    func comparable(_ report: [String: Any]) throws -> [String: String] {
        var report = report
        // The files read, and what depends on when a run saw which connection: its buffers' peak,
        // and the closed connections its cap finalized early.
        report["inputs"] = nil
        var limits = report["limits"] as! [String: Any]
        limits["peakBufferedBytes"] = nil
        limits["closedLimitFinalized"] = nil
        report["limits"] = limits
        return try report.mapValues { value in
            String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]), as: UTF8.self)
        }
    }

    /// Splits `capture` into `shards`, analyzes each, merges, and holds the merge to the whole run.
    @discardableResult
    func expectMergeEqualsTheWholeRun(_ capture: String, shards: Int, analyze: [String]) throws -> (merged: [String: Any], shardReports: [String]) {
        let directory = cli.temporaryDirectory()
        let split = try cli.run(["split", "--by-flow", String(shards), capture, "-o", directory])
        #expect(split.status == 0, "\(split.stderr)")
        let whole = directory + "/whole.json"
        #expect(try cli.run(["analyze", capture] + analyze + ["--format", "json", "-o", whole]).status == 0)
        var reports: [String] = []
        for k in 0..<shards {
            let shard = directory + "/shard-" + String(format: "%03d", k) + ".pcap"
            let run = try cli.run(["analyze", shard] + analyze + ["--format", "json", "-o", shard + ".json"])
            #expect(run.status == 0, "\(run.stderr)")
            reports.append(shard + ".json")
        }
        let mergedPath = directory + "/merged.json"
        let merge = try cli.run(["merge"] + reports.reversed() + ["-o", mergedPath])  // any order
        #expect(merge.status == 0, "\(merge.stderr)")
        // The connections byte for byte (50,000 of them are slow to compare as objects), the rest as objects.
        let (wholeText, mergedText) = (try Data(contentsOf: URL(fileURLWithPath: whole)), try Data(contentsOf: URL(fileURLWithPath: mergedPath)))
        let (wholeConnections, mergedConnections) = (try connections(in: wholeText), try connections(in: mergedText))
        #expect(wholeText[wholeConnections] == mergedText[mergedConnections], "every connection as the whole run lists it")
        let single = try json(wholeText, without: wholeConnections), merged = try json(mergedText, without: mergedConnections)
        let (a, b) = (try comparable(single), try comparable(merged))
        #expect(a.keys.sorted() == b.keys.sorted())
        for key in a.keys.sorted() where a[key] != b[key] {
            Issue.record("\(key) differs:\n single \(a[key]!.prefix(600))\n merged \(b[key]!.prefix(600))")
        }
        #expect((merged["inputs"] as! [[String: Any]]).count == shards)
        return (merged, reports)
    }

    /// Many connections picked up mid-stream, with junk (malformed headers, events) and reconnects.
    @Test func aSynthCaptureOfManyConnectionsMergesIntoTheWholeRun() throws {
        let (capture, spec) = try SplitTests.manyConnections(cli)
        let (merged, reports) = try expectMergeEqualsTheWholeRun(capture, shards: 5, analyze: ["--dissector", spec])
        #expect((merged["eventsTotal"] as! Int) > 0, "junk gives events to merge")
        // An event's time and filter are read back (the filter's connection renamed, its frame
        // kept): text framescope does not write is an error naming the place.
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: reports[0])), as: UTF8.self)
        let events = try #require(text.range(of: "\"events\" : ["))
        for (from, to, reason) in [(" && frame.number == ", " && frame.number >= ", "wiresharkFilter"), ("\"time\" : \"", "\"time\" : \"x", "time")] {
            let at = try #require(text.range(of: from, range: events.upperBound..<text.endIndex))
            let broken = reports[0] + ".broken.json"
            try Data(text.replacingCharacters(in: at, with: to).utf8).write(to: URL(fileURLWithPath: broken))
            let run = try cli.run(["merge", broken] + reports.dropFirst())
            #expect(run.status == 1 && run.stderr.contains("events[0].\(reason)"), "\(run.stderr)")
        }
    }

    /// 50,000 connections, the scale case.
    @Test func fiftyThousandConnectionsMergeIntoTheWholeRun() throws {
        let capture = scratchDirectory + "merge-\(UUID().uuidString).pcap"
        let synth = try cli.run(["synth", "--size", "12M", "--flows", "50000", "--seed", "3", "-o", capture])
        #expect(synth.status == 0, "\(synth.stderr)")
        let (merged, _) = try expectMergeEqualsTheWholeRun(capture, shards: 4, analyze: ["--dissector", "varint"])
        #expect((merged["totals"] as! [String: Any])["connections"] as! Int >= 50000)
        #expect(merged["responseTimes"] != nil)
    }

    /// A sample, re-cut to the wire's segments with --mss (the as-captured figures merge too), and a
    /// length field with a type (latencies by type).
    @Test func samplesMergeIntoTheWholeRun() throws {
        try expectMergeEqualsTheWholeRun(CLITests.sample, shards: 3, analyze: ["--dissector", "varint", "--mss", "100"])
        let typed = CLITests.root.appendingPathComponent("samples/seed-7byte-header.pcap").path
        let (merged, reports) = try expectMergeEqualsTheWholeRun(typed, shards: 2, analyze: ["--dissector", "length:offset=5,width=2,magic=0001,type=2:2"])
        #expect(((merged["totals"] as! [String: Any])["serverToClient"] as! [String: Any])["assemblyLatencyByType"] != nil)
        let run = try cli.run(["merge"] + reports)
        #expect(run.status == 0)
        try cli.expectValidReport(run.stdout)
    }

    /// A real capture of many TLS connections with losses: retransmissions, gaps, events.
    @Test func aLossyRealCaptureMergesIntoTheWholeRun() throws {
        let capture = ExportCLITests.corpus + "/tls-many-flows-lossy.pcap"
        guard FileManager.default.fileExists(atPath: capture) else { return oracleMissing("merge: no ../shared/corpus") }
        let (merged, reports) = try expectMergeEqualsTheWholeRun(capture, shards: 4, analyze: ["--dissector", "preset:tls"])
        let filters = (merged["events"] as! [[String: Any]]).map { $0["wiresharkFilter"] as! String }
        #expect(!filters.isEmpty && filters.allSatisfy { $0.hasPrefix("tcp.stream == ") }, "the merged IDs are the capture's stream numbers")
        // A merged report merges again: merging in two steps is merging at once.
        let directory = try folder()
        #expect(try cli.run(["merge", reports[0], reports[1], "-o", directory + "/half.json"]).status == 0)
        #expect(try cli.run(["merge", directory + "/half.json", reports[2], reports[3], "-o", directory + "/two-steps.json"]).status == 0)
        #expect(try cli.run(["merge"] + reports + ["-o", directory + "/at-once.json"]).status == 0)
        var stepwise = try json(directory + "/two-steps.json"), atOnce = try json(directory + "/at-once.json")
        stepwise["inputs"] = nil
        atOnce["inputs"] = nil
        #expect(NSDictionary(dictionary: stepwise).isEqual(to: atOnce))
    }

    /// What cannot be merged is refused with the reason, exit 1, and no output written.
    @Test func reportsThatCannotBeMergedAreRefused() throws {
        let directory = try folder()
        func report(_ name: String, _ options: [String]) throws -> String {
            let path = directory + "/" + name + ".json"
            let run = try cli.run(["analyze", CLITests.sample] + options + ["--format", "json", "-o", path])
            #expect(run.status == 0, "\(run.stderr)")
            return path
        }
        let varint = try report("varint", ["--dissector", "varint"])
        let sample = try cli.run(["analyze", CLITests.sample, "--dissector", "varint", "--connections", "none", "--format", "json", "-o", directory + "/none.json"])
        #expect(sample.status == 0)
        // An older framescope's report: its connections' lines say other things.
        let older = directory + "/older.json"
        try String(contentsOfFile: varint, encoding: .utf8).replacingOccurrences(of: "framescope.report/4", with: "framescope.report/3")
            .write(toFile: older, atomically: true, encoding: .utf8)
        let cases: [(String, String)] = [
            (older, "framescope.report/3, another framescope's version of the report: analyze the shard again with this one"),
            (try report("lines", ["--dissector", "lines"]), "dissectors differ"),
            (try report("auto", ["--dissector", "auto"]), "--dissector auto"),
            (try report("mss", ["--dissector", "varint", "--mss", "100"]), "--mss 100"),
            (directory + "/none.json", "--connections all"),
            (CLITests.sample, "byte 0"),
        ]
        for (other, reason) in cases {
            let out = directory + "/merged.json"
            let run = try cli.run(["merge", varint, other, "-o", out])
            #expect(run.status == 1, "\(other)")
            #expect(run.stderr.contains(reason), "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
    }
    /// A report cut anywhere, or with a count past what a capture holds, is a clear error naming
    /// the file and the place, never a crash.
    @Test func brokenReportsAreErrorsNotCrashes() throws {
        let directory = try folder()
        let good = directory + "/good.json"
        #expect(try cli.run(["analyze", CLITests.sample, "--dissector", "varint", "--format", "json", "-o", good]).status == 0)
        let text = try Data(contentsOf: URL(fileURLWithPath: good))
        var broken: [(Data, String)] = stride(from: 1, to: text.count, by: text.count / 23).map { (text.prefix($0), "byte") }
        broken.append((Data(String(decoding: text, as: UTF8.self).replacingOccurrences(of: "\"eventsTotal\" : 0", with: "\"eventsTotal\" : 99999999999999999999").utf8), "eventsTotal"))
        broken.append((Data(String(decoding: text, as: UTF8.self).replacingOccurrences(of: "\"zeros\":", with: "\"zeros\":-").utf8), "histogram"))
        broken.append((Data(String(decoding: text, as: UTF8.self).replacingOccurrences(of: "\"recutSegments\" : 0", with: "\"recutSegments\" : 9223372036854775807").utf8), "recutSegments"))
        broken.append((text + Data("{}".utf8), "more after the document's end"))
        broken.append((Data("{\"schema\":".utf8) + Data(repeating: 0x5B, count: 100_000), "nested deeper"))
        for (index, (bytes, reason)) in broken.enumerated() {
            let path = directory + "/broken-\(index).json"
            try bytes.write(to: URL(fileURLWithPath: path))
            let run = try cli.run(["merge", good, path])
            #expect(run.status == 1 && run.stderr.contains(path) && run.stderr.contains(reason), "\(index): \(run.status) \(run.stderr)")
        }
    }
}
