import Foundation
import Testing

/// How many connections a report lists, and that every way of listing them tells the same story:
/// the worst by the documented rank, every one in ID order, one NDJSON line each.
@Suite struct ConnectionListingTests {
    let cli = CLITests()

    /// About 75 short varint connections, a tenth of the writes starting with a bogus length: some
    /// connections have malformed headers, most do not.
    static let capture: String = {
        let path = scratchDirectory + "framescope-listing-\(UUID().uuidString).pcap"
        let made = try! CLITests().run([
            "synth", "--size", "2M", "--flows", "20", "--connection-size", "16K", "--junk", "0.1", "--seed", "7", "-o", path,
        ])
        precondition(made.status == 0, made.stderr)
        return path
    }()

    func json(_ arguments: [String]) throws -> [String: Any] {
        let run = try cli.run(["analyze", Self.capture, "--dissector", "varint", "--format", "json"] + arguments)
        #expect(run.status == 0, "\(run.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
    }

    /// The rank of the README: problems, then naive-reader loss, then partial + merged, then bytes.
    func rank(_ connection: [String: Any]) -> [Int] {
        var r = [0, 0, 0, 0]
        for d in connection["directions"] as! [[String: Any]] {
            let f = d["figures"] as? [String: Any] ?? [:]
            func n(_ key: String) -> Int { f[key] as? Int ?? 0 }
            r[0] += n("malformed") + n("damagedByGaps") + n("incompleteAtEnd") + n("boundariesNotFound")
            r[1] += n("naiveReaderLoss")
            r[2] += n("partialMessages") + n("mergedSegments")
            r[3] += d["bytes"] as? Int ?? 0
        }
        return r
    }

    @Test func everyListingAgrees() throws {
        let all = try json([])
        let connections = try #require(all["connections"] as? [[String: Any]])
        let total = try #require((all["totals"] as? [String: Any])?["connections"] as? Int)
        #expect(connections.count == total && total > 40)
        #expect(connections.map { $0["id"] as! Int } == Array(0..<total))
        #expect((all["totals"] as? [String: Any])?["foldedConnections"] as? Int == 0)
        #expect(connections.contains { rank($0)[0] > 0 } && connections.contains { rank($0)[0] == 0 })

        // --connections worst: the --top worst by the rank, worst first (lower ID first among equals).
        let worst = try json(["--connections", "worst", "--top", "5"])
        let listed = try #require(worst["connections"] as? [[String: Any]])
        let expected = connections.sorted {
            let (a, b) = (rank($0), rank($1))
            return a != b ? a.lexicographicallyPrecedes(b) == false : ($0["id"] as! Int) < ($1["id"] as! Int)
        }.prefix(5)
        #expect(listed.map { $0["id"] as! Int } == expected.map { $0["id"] as! Int })
        #expect((worst["totals"] as? [String: Any])?["foldedConnections"] as? Int == total - 5)
        var (worstTotals, allTotals) = (worst["totals"] as! [String: Any], all["totals"] as! [String: Any])
        (worstTotals["foldedConnections"], allTotals["foldedConnections"]) = (nil, nil)
        #expect(NSDictionary(dictionary: worstTotals).isEqual(to: allTotals))  // the totals count every connection

        let none = try json(["--connections", "none"])
        #expect((none["connections"] as? [Any])?.isEmpty == true)
        #expect((none["totals"] as? [String: Any])?["foldedConnections"] as? Int == total)

        // --connections-ndjson: one line per connection, each the report's object.
        let lines = scratchDirectory + "framescope-listing-\(UUID().uuidString).ndjson"
        _ = try json(["--connections-ndjson", lines, "--connections", "none"])
        let streamed = try String(contentsOfFile: lines, encoding: .utf8).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
        #expect(streamed.count == total)
        let byID = Dictionary(uniqueKeysWithValues: connections.map { ($0["id"] as! Int, $0) })
        for line in streamed {
            #expect(NSDictionary(dictionary: line).isEqual(to: byID[line["id"] as! Int]!), "connection \(line["id"]!)")
        }
    }

    /// Connections finish in an order of their own (here the closed limit finalizes them as they
    /// close, some hundreds of places after their ID), while the listing is in ID order: read back
    /// from the spill in batches (3.4 MB of lines: two batches and more), each line is still the
    /// one streamed as the connection finished, and workers' spills combine to the same bytes;
    /// the listing built on a thread of its own (`-t 2`) is byte for byte the one built on the
    /// analysis thread (`-t 1`), lines streamed as they finish included.
    @Test func aListingReadBackInBatchesKeepsIDOrder() throws {
        let capture = scratchDirectory + "framescope-listing-order-\(UUID().uuidString).pcap"
        let made = try cli.run(["synth", "--size", "20M", "--flows", "500", "--connection-size", "2K", "--seed", "3", "-o", capture])
        #expect(made.status == 0, "\(made.stderr)")
        let (report, lines) = (capture + ".json", capture + ".ndjson")
        let options = ["analyze", capture, "--dissector", "varint", "--format", "json", "--max-closed-connections", "64", "--quiet"]
        #expect(try cli.run(options + ["-o", report, "--connections-ndjson", lines, "--threads", "2"]).status == 0)
        let streamed = try String(contentsOfFile: lines, encoding: .utf8).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
        let finishOrder = streamed.map { $0["id"] as! Int }
        #expect(finishOrder.count > 2000)
        #expect(finishOrder.enumerated().contains { abs($0.offset - $0.element) > 300 })
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as! [String: Any]
        let listed = try #require(json["connections"] as? [[String: Any]])
        #expect(listed.map { $0["id"] as! Int } == Array(0..<finishOrder.count))
        for line in streamed {
            #expect(NSDictionary(dictionary: line).isEqual(to: listed[line["id"] as! Int]), "connection \(line["id"]!)")
        }
        // Three workers' spills, each read back in its own batches, under the capture's IDs.
        let sharded = capture + ".t3.json"
        #expect(try cli.run(options + ["-o", sharded, "--threads", "3"]).status == 0)
        #expect(FileManager.default.contentsEqual(atPath: report, andPath: sharded))
        let (oneThread, oneThreadLines) = (capture + ".t1.json", capture + ".t1.ndjson")
        #expect(try cli.run(options + ["-o", oneThread, "--connections-ndjson", oneThreadLines, "--threads", "1"]).status == 0)
        #expect(FileManager.default.contentsEqual(atPath: report, andPath: oneThread))
        #expect(FileManager.default.contentsEqual(atPath: lines, andPath: oneThreadLines))
    }

    @Test func humanFormatsListTheTopWorstAndSayHowManyMore() throws {
        let all = try json([])
        let total = try #require((all["totals"] as? [String: Any])?["connections"] as? Int)
        let text = try cli.run(["analyze", Self.capture, "--dissector", "varint", "--top", "3"])
        #expect(text.status == 0)
        #expect(text.stdout.contains("the 3 worst of \(total) connections"))
        #expect(text.stdout.contains("and \(total - 3) more"))
        let markdown = try cli.run(["analyze", Self.capture, "--dissector", "varint", "--top", "3", "--format", "markdown"])
        #expect(markdown.stdout.contains("and \(total - 3) more"))
        // Every connection listed: nothing to say.
        let every = try cli.run(["analyze", Self.capture, "--dissector", "varint", "--top", "1000"])
        #expect(!every.stdout.contains(" more: --top N"))
    }

    /// A closed connection stays in the table `--closed-timeout` seconds: a lossy corpus capture
    /// delivers data seconds after an RST, so 60 s keeps tshark's 68 streams and 2 s splits them.
    @Test func closedTimeoutTradesStreamsForMemory() throws {
        let capture = ExportCLITests.corpus + "/tls-many-flows-lossy.pcap"
        guard FileManager.default.fileExists(atPath: capture) else {
            oracleMissing("closed-timeout on a lossy capture: no ../shared/corpus")
            return
        }
        func connections(_ extra: [String]) throws -> Int? {
            let run = try cli.run(["flows", capture, "--format", "json"] + extra)
            let json = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
            return (json?["connections"] as? [Any])?.count
        }
        #expect(try connections([]) == 68)
        #expect(try connections(["--closed-timeout", "2"]) == 76)
        #expect(try cli.run(["flows", capture, "--closed-timeout", "0"]).status == 64)
    }
}
