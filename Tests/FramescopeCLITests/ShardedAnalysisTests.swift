import Foundation
import Testing

/// `analyze --threads N` past 1 shares a capture's connections out among N − 1 workers (with one
/// worker, the reading thread takes a share too), each with its own flow table and analysis, and
/// combines them: the report is byte for byte the one
/// a single table gives, in every format and for every N — connection IDs, figures, evidence,
/// the connections finalized by timeouts (sweeps at the same packets) and by the closed-
/// connection limit (which holds per group of connections, each group wholly in one worker).
@Suite struct ShardedAnalysisTests {
    let cli = CLITests()
    static let formats = ["json", "text", "markdown", "html"]

    /// The report with `-t 1` and with each of `threads`, in `formats`, compared as bytes.
    @discardableResult
    func expectIdentical(_ capture: String, _ options: [String], formats: [String] = formats, threads: [Int] = [2, 3, 4, 7]) throws -> String {
        var json = ""
        for format in formats {
            let single = try cli.run(["analyze", capture] + options + ["--format", format, "-t", "1", "--quiet"])
            #expect(single.status == 0, "\(single.stderr)")
            if format == "json" { json = single.stdout }
            for t in threads {
                let sharded = try cli.run(["analyze", capture] + options + ["--format", format, "-t", String(t), "--quiet"])
                #expect(sharded.status == single.status, "-t \(t): \(sharded.stderr)")
                if sharded.stdout != single.stdout {
                    let at = zip(sharded.stdout.utf8, single.stdout.utf8).prefix { $0 == $1 }.count
                    Issue.record("\(format) with -t \(t) differs from -t 1 at byte \(at): \(single.stdout.utf8.dropFirst(max(0, at - 80)).prefix(200))")
                }
            }
        }
        return json
    }

    func report(_ json: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    /// Samples: varint with --mss (the as-captured figures combine too), a length field with a type.
    @Test func samplesAreTheSameForEveryNumberOfWorkers() throws {
        try expectIdentical(CLITests.sample, ["--dissector", "varint", "--mss", "100"])
        let typed = CLITests.root.appendingPathComponent("samples/seed-7byte-header.pcap").path
        try expectIdentical(typed, ["--dissector", "length:offset=5,width=2,magic=0001,type=2:2"])
    }

    /// Connections picked up mid-stream, with junk (events, examples) and reconnects.
    @Test func aCaptureWithJunkAndLateStartsIsTheSameForEveryNumberOfWorkers() throws {
        let (capture, spec) = try SplitTests.manyConnections(cli)
        let json = try expectIdentical(capture, ["--dissector", spec])
        #expect((try report(json)["eventsTotal"] as! Int) > 0)
    }

    /// A pause of three seconds in the middle: with a one-second idle timeout the sweeps after
    /// it finalize the connections it interrupted, and their later packets open new ones — at
    /// the same packets whichever worker holds them.
    @Test func sweepsFinalizeAtTheSamePacketsForEveryNumberOfWorkers() throws {
        let (capture, spec) = try SplitTests.manyConnections(cli)
        let paused = capture + ".paused.pcap"
        try Self.pause(capture, seconds: 3, to: paused)
        let json = try expectIdentical(paused, ["--dissector", spec, "--idle-timeout", "1", "--closed-timeout", "1"], formats: ["json", "text"])
        #expect((try report(json)["totals"] as! [String: Any])["connections"] as! Int > 400, "the pause split connections")
    }

    /// Many short connections past the closed-connection limit: the same ones finalized early.
    @Test func theClosedConnectionLimitFinalizesTheSameConnections() throws {
        let capture = scratchDirectory + "sharded-\(UUID().uuidString).pcap"
        let synth = try cli.run(["synth", "--size", "1M", "--shape", "request-response", "--connection-size", "64", "--framing", "length", "--seed", "5", "-o", capture])
        #expect(synth.status == 0, "\(synth.stderr)")
        let spec = try #require(try report(String(decoding: Data(contentsOf: URL(fileURLWithPath: capture + ".truth.json")), as: UTF8.self))["spec"] as? String)
        let json = try expectIdentical(capture, ["--dissector", spec, "--max-closed-connections", "128"], formats: ["json", "text"])
        #expect((try report(json)["limits"] as! [String: Any])["closedLimitFinalized"] as! Int > 0, "the limit binds")
    }

    /// A real capture of many TLS connections with losses: gaps, retransmissions, buffering.
    @Test func aLossyRealCaptureIsTheSameForEveryNumberOfWorkers() throws {
        let capture = ExportCLITests.corpus + "/tls-many-flows-lossy.pcap"
        guard FileManager.default.fileExists(atPath: capture) else { return oracleMissing("sharded: no ../shared/corpus") }
        let json = try expectIdentical(capture, ["--dissector", "preset:tls"])
        #expect((try report(json)["limits"] as! [String: Any])["peakBufferedBytes"] as! Int > 0)
    }

    /// 50,000 connections.
    @Test func fiftyThousandConnectionsAreTheSameForEveryNumberOfWorkers() throws {
        let capture = scratchDirectory + "sharded-\(UUID().uuidString).pcap"
        #expect(try cli.run(["synth", "--size", "12M", "--flows", "50000", "--seed", "3", "-o", capture]).status == 0)
        try expectIdentical(capture, ["--dissector", "varint"], formats: ["json", "text"], threads: [2, 3, 5])
    }

    /// What is written as the analysis goes (messages, connection lines) keeps the capture's
    /// order: with those, one table analyzes, whatever --threads says.
    @Test func streamedOutputsAreWrittenAsWithOneTable() throws {
        let directory = cli.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for t in ["1", "4"] {
            let run = try cli.run([
                "analyze", CLITests.sample, "--dissector", "varint", "-t", t, "--quiet", "--messages", directory + "/m\(t).ndjson",
                "--connections-ndjson", directory + "/c\(t).ndjson", "--format", "json", "-o", directory + "/r\(t).json",
            ])
            #expect(run.status == 0, "\(run.stderr)")
        }
        for name in ["m", "c", "r"] {
            #expect(FileManager.default.contentsEqual(atPath: directory + "/\(name)1" + (name == "r" ? ".json" : ".ndjson"), andPath: directory + "/\(name)4" + (name == "r" ? ".json" : ".ndjson")))
        }
    }

    /// `capture` with every record from the middle on `seconds` later (a classic pcap, as synth writes).
    static func pause(_ capture: String, seconds: UInt32, to path: String) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: capture)))
        var records: [Int] = []
        var offset = 24
        func word(_ at: Int) -> UInt32 { UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24 }
        while offset + 16 <= bytes.count {
            records.append(offset)
            offset += 16 + Int(word(offset + 8))
        }
        for at in records[(records.count / 2)...] {
            let moved = word(at) + seconds
            for k in 0..<4 { bytes[at + k] = UInt8(truncatingIfNeeded: moved >> (8 * k)) }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
}
