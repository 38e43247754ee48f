import Foundation
import Testing

/// `framescope split --by-flow N`: every connection lands whole in one shard, and a shard's
/// reports (through its frame index) say what the single run says of the same connections, with
/// the original frame numbers.
@Suite struct SplitTests {
    let cli = CLITests()

    func json(_ path: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
    }

    /// A report's objects under `key` as sorted canonical text, without the fields a shard numbers
    /// on its own (connection IDs and the filters built from them).
    func comparable(_ report: [String: Any], _ key: String) throws -> [String] {
        let objects = report[key] as? [[String: Any]] ?? []
        return try objects.map { object in
            var object = object
            for field in ["id", "connection", "wiresharkFilter"] { object[field] = nil }
            return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
        }.sorted()
    }

    /// Splits `capture` into `shards`, analyzes it whole and each shard, and compares.
    func expectShardsAgreeWithTheWholeRun(_ capture: String, shards: Int, analyze: [String]) throws {
        let directory = cli.temporaryDirectory()
        let split = try cli.run(["split", "--by-flow", String(shards), capture, "-o", directory])
        #expect(split.status == 0, "\(split.stderr)")
        let whole = scratchDirectory + "whole-\(UUID().uuidString).json"
        #expect(try cli.run(["analyze", capture] + analyze + ["--format", "json", "-o", whole]).status == 0)
        let single = try json(whole)
        var connections: [String] = [], events: [String] = [], eventsTotal = 0, packets = 0, frames: [Int] = []
        for k in 0..<shards {
            let shard = directory + "/shard-" + String(format: "%03d", k) + ".pcap"
            let out = scratchDirectory + "shard-\(UUID().uuidString).json"
            let run = try cli.run(["analyze", shard] + analyze + ["--format", "json", "-o", out])
            #expect(run.status == 0, "\(run.stderr)")
            let report = try json(out)
            connections += try comparable(report, "connections")
            events += try comparable(report, "events")
            eventsTotal += report["eventsTotal"] as! Int
            let input = try #require((report["inputs"] as? [[String: Any]])?.first)
            #expect(input["frameIndex"] as? String == shard + ".frames")
            packets += input["packets"] as! Int
            // Every record of the shard, by its original number (flows lists each connection's first).
            let flows = try cli.run(["flows", shard, "--format", "json"])
            for c in (try JSONSerialization.jsonObject(with: Data(flows.stdout.utf8)) as! [String: Any])["connections"] as! [[String: Any]] {
                frames.append(c["firstFrame"] as! Int)
            }
        }
        let total = try #require((single["inputs"] as? [[String: Any]])?.first?["packets"] as? Int)
        #expect(packets == total, "the shards together hold every record")
        let wholeConnections = try comparable(single, "connections")
        #expect(connections.sorted() == wholeConnections, "each connection's figures, as the whole run has them")
        #expect(events.sorted() == (try comparable(single, "events")), "events, with the original frame numbers")
        #expect(eventsTotal == single["eventsTotal"] as! Int)
        let wholeFlows = try cli.run(["flows", capture, "--format", "json"])
        let firstFrames = ((try JSONSerialization.jsonObject(with: Data(wholeFlows.stdout.utf8)) as! [String: Any])["connections"] as! [[String: Any]])
            .map { $0["firstFrame"] as! Int }
        #expect(frames.sorted() == firstFrames.sorted(), "connections start at their original frames")
    }

    /// Many connections picked up mid-stream, with junk and reconnects: the events and every
    /// connection's figures survive the split.
    @Test func aSynthCaptureOfManyConnectionsSplitsIntoAgreeingShards() throws {
        let (capture, spec) = try Self.manyConnections(cli)
        try expectShardsAgreeWithTheWholeRun(capture, shards: 5, analyze: ["--dissector", spec])
    }

    /// 400 connections picked up mid-stream, with junk and reconnects, and the SPEC that frames them.
    static func manyConnections(_ cli: CLITests) throws -> (capture: String, spec: String) {
        let capture = scratchDirectory + "split-\(UUID().uuidString).pcap"
        let synth = try cli.run([
            "synth", "--size", "1500K", "--flows", "400", "--framing", "length", "--seed", "11", "--late-start",
            "--junk", "0.05", "--reconnect", "0.05", "-o", capture,
        ])
        #expect(synth.status == 0, "\(synth.stderr)")
        let truth = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: capture + ".truth.json"))) as? [String: Any])
        return (capture, try #require(truth["spec"] as? String))
    }

    /// A real capture of many TLS connections with losses.
    @Test func aLossyRealCaptureSplitsIntoAgreeingShards() throws {
        let capture = ExportCLITests.corpus + "/tls-many-flows-lossy.pcap"
        guard FileManager.default.fileExists(atPath: capture) else { return oracleMissing("split: no ../shared/corpus") }
        try expectShardsAgreeWithTheWholeRun(capture, shards: 3, analyze: ["--dissector", "preset:tls"])
    }

    /// The shard's Wireshark filter for an event picks exactly that frame of the original capture.
    @Test func aShardsWiresharkFilterFindsTheFrameInTheOriginal() throws {
        guard let tshark = ExportCLITests.tshark else { return oracleMissing("split filters: no tshark") }
        let capture = scratchDirectory + "split-\(UUID().uuidString).pcap"
        #expect(try cli.run(["synth", "--size", "400K", "--flows", "40", "--framing", "length", "--seed", "2", "--junk", "0.2", "-o", capture]).status == 0)
        let spec = try json(capture + ".truth.json")["spec"] as! String
        let directory = cli.temporaryDirectory()
        #expect(try cli.run(["split", "--by-flow", "2", capture, "-o", directory]).status == 0)
        let out = scratchDirectory + "shard-\(UUID().uuidString).json"
        #expect(try cli.run(["analyze", directory + "/shard-001.pcap", "--dissector", spec, "--format", "json", "-o", out]).status == 0)
        let events = try #require(try json(out)["events"] as? [[String: Any]])
        let event = try #require(events.first, "junk makes malformed events")
        let filter = event["wiresharkFilter"] as! String
        #expect(!filter.contains("tcp.stream"), "a shard's stream numbers are its own")
        let found = try cli.run(["-r", capture, "-Y", filter, "-T", "fields", "-e", "frame.number"], executable: tshark)
        #expect(found.stdout.split(separator: "\n") == [Substring(String(event["frame"] as! Int))])
    }

    /// A pcap's records (header and bytes), as written by libpcap in this machine's byte order.
    func records(_ pcap: Data) -> [Data] {
        var out: [Data] = [], at = 24
        let bytes = [UInt8](pcap)
        while at + 16 <= bytes.count {
            let length = Int(bytes[at + 8]) | Int(bytes[at + 9]) << 8 | Int(bytes[at + 10]) << 16 | Int(bytes[at + 11]) << 24
            out.append(Data(bytes[at..<min(bytes.count, at + 16 + length)]))
            at += 16 + length
        }
        return out
    }

    /// A shard's second pass (the frames of `--export-messages`) numbers frames by its index too:
    /// every frame a shard exports is one the original capture exports, whatever its place in
    /// the shard.
    @Test func aShardExportsTheOriginalsFrames() throws {
        let capture = scratchDirectory + "split-\(UUID().uuidString).pcap"
        #expect(try cli.run(["synth", "--size", "300K", "--flows", "30", "--framing", "varint", "--seed", "6", "-o", capture]).status == 0)
        let directory = cli.temporaryDirectory()
        #expect(try cli.run(["split", "--by-flow", "3", capture, "-o", directory]).status == 0)
        var exported: [[Data]] = []
        for input in [capture, directory + "/shard-001.pcap"] {
            let out = scratchDirectory + "export-\(UUID().uuidString).pcap"
            let run = try cli.run(["analyze", input, "--dissector", "varint", "--export-messages", out, "--export-only", "partial", "-o", "/dev/null"])
            #expect(run.status == 0, "\(run.stderr)")
            exported.append(records(try Data(contentsOf: URL(fileURLWithPath: out))))
        }
        #expect(!exported[1].isEmpty && exported[1].count < exported[0].count)
        #expect(Set(exported[1]).isSubset(of: Set(exported[0])))
    }

    /// Shards given together interleave their original numbers: split says so instead of writing
    /// an index that goes back.
    @Test func shardsSplitTogetherAreRefused() throws {
        let capture = scratchDirectory + "split-\(UUID().uuidString).pcap"
        #expect(try cli.run(["synth", "--size", "200K", "--flows", "20", "--seed", "4", "-o", capture]).status == 0)
        let first = cli.temporaryDirectory(), second = cli.temporaryDirectory()
        #expect(try cli.run(["split", "--by-flow", "2", capture, "-o", first]).status == 0)
        let run = try cli.run(["split", "--by-flow", "1", first + "/shard-000.pcap", first + "/shard-001.pcap", "-o", second])
        #expect(run.status == 1)
        #expect(run.stderr.contains("comes after a higher one"), "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: second).isEmpty)
    }

    /// Shards of an earlier split with more of them would join a batch run over the folder: named.
    @Test func shardsLeftFromAnEarlierSplitAreNamed() throws {
        let directory = cli.temporaryDirectory()
        #expect(try cli.run(["split", "--by-flow", "4", CLITests.sample, "-o", directory]).status == 0)
        let again = try cli.run(["split", "--by-flow", "2", CLITests.sample, "-o", directory])
        #expect(again.status == 0)
        #expect(again.stderr.contains("shard-002.pcap is left from an earlier split") && again.stderr.contains("shard-003.pcap is left"), "\(again.stderr)")
        #expect(!again.stderr.contains("shard-001.pcap is left"))
    }

    /// A thousand shards need three thousand open files: a shell's soft limit is raised to them
    /// where the hard limit allows, and a hard limit too low is a usage error, not a half-split.
    @Test func manyShardsRaiseTheOpenFileLimitOrSaySo() throws {
        let directory = cli.temporaryDirectory(), refused = cli.temporaryDirectory()
        let raised = try cli.run(["-c", "ulimit -Sn 256; exec \"$0\" split --by-flow 1000 \"$1\" -o \"$2\"", CLITests.binary, CLITests.sample, directory], executable: "/bin/sh")
        #expect(raised.status == 0, "\(raised.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).count == 2000)
        let low = try cli.run(["-c", "ulimit -Sn 256; ulimit -Hn 256; exec \"$0\" split --by-flow 1000 \"$1\" -o \"$2\"", CLITests.binary, CLITests.sample, refused], executable: "/bin/sh")
        #expect(low.status == 64)
        #expect(low.stderr.contains("--by-flow needs 3016 open files"), "\(low.stderr)")
    }

    /// A frame index that belongs to another capture is an error, not wrong frame numbers.
    @Test func aFrameIndexOfAnotherCaptureIsRefused() throws {
        let directory = cli.temporaryDirectory()
        #expect(try cli.run(["split", "--by-flow", "2", CLITests.sample, "-o", directory]).status == 0)
        let copy = directory + "/copy.pcap"
        try FileManager.default.copyItem(atPath: CLITests.sample, toPath: copy)
        // The shard with fewer records: its index cannot number the whole sample.
        let indexes = try ["000", "001"].map { directory + "/shard-\($0).pcap.frames" }
            .sorted { try Data(contentsOf: URL(fileURLWithPath: $0)).count < Data(contentsOf: URL(fileURLWithPath: $1)).count }
        try FileManager.default.copyItem(atPath: indexes[0], toPath: copy + ".frames")
        let run = try cli.run(["flows", copy])
        #expect(run.status == 1)
        #expect(run.stderr.contains("they do not belong together"), "\(run.stderr)")
        try Data("not an index".utf8).write(to: URL(fileURLWithPath: copy + ".frames"))
        let garbage = try cli.run(["flows", copy])
        #expect(garbage.status == 1 && garbage.stderr.contains("not a framescope frame index"), "\(garbage.stderr)")
    }

    /// A pcap holds one link type: inputs of two are refused, and no shard is left behind.
    @Test func inputsOfTwoLinkTypesAreRefusedWithoutShards() throws {
        let other = ExportCLITests.corpus + "/redis-sll.pcap"
        guard FileManager.default.fileExists(atPath: other) else { return oracleMissing("split link types: no ../shared/corpus") }
        let directory = cli.temporaryDirectory()
        let run = try cli.run(["split", "--by-flow", "2", CLITests.sample, other, "-o", directory])
        #expect(run.status == 1)
        #expect(run.stderr.contains("a pcap holds one"), "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    }
}
