import Foundation
import Testing

/// The TCP context beside the framing figures, held to tshark's own TCP analysis on every
/// sample and corpus capture: per connection and direction, the duplicate ACKs and zero windows
/// the receiver sent (`tcp.analysis.duplicate_ack`, `zero_window`), the round trips of the
/// direction's data to their ACKs (`tcp.analysis.ack_rtt`: same sum and maximum; tshark leaves
/// out round trips of 0 at the capture's resolution, which add nothing to a sum; a direction
/// without payload is timed in the totals only), and the handshake's round trip
/// (`tcp.analysis.initial_rtt`).
@Suite struct TCPContextTests {
    let cli = CLITests()

    struct Truth {
        var duplicateAcks = 0
        var zeroWindows = 0
        var windowFull = 0
        var rtts: [Double] = []
    }

    /// tshark's findings by (stream, the sending port, the receiving port), and each stream's handshake round trip.
    func tshark(_ capture: String) throws -> (segments: [String: Truth], initialRTT: [Int: Double]) {
        let fields = ["tcp.stream", "tcp.srcport", "tcp.dstport", "tcp.analysis.ack_rtt", "tcp.analysis.duplicate_ack", "tcp.analysis.zero_window", "tcp.analysis.initial_rtt", "tcp.analysis.window_full"]
        let result = try cli.run(
            ["-r", capture, "-Y", "tcp", "-T", "fields", "-E", "separator=|", "-E", "occurrence=f"] + fields.flatMap { ["-e", $0] },
            executable: try #require(ExportCLITests.tshark))
        var segments: [String: Truth] = [:], initialRTT: [Int: Double] = [:]
        for line in result.stdout.split(separator: "\n", omittingEmptySubsequences: true) {
            let f = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard f.count == fields.count, let stream = Int(f[0]) else { continue }
            let key = "\(stream) \(f[1])>\(f[2])"
            if let rtt = Double(f[3]) { segments[key, default: Truth()].rtts.append(rtt) }
            if !f[4].isEmpty { segments[key, default: Truth()].duplicateAcks += 1 }
            if !f[5].isEmpty { segments[key, default: Truth()].zeroWindows += 1 }
            if let rtt = Double(f[6]), initialRTT[stream] == nil { initialRTT[stream] = rtt }
            if !f[7].isEmpty { segments[key, default: Truth()].windowFull += 1 }
        }
        return (segments, initialRTT)
    }

    /// A receiver that stops reading (scripts/record-zero-window.py: real Linux TCP on loopback,
    /// a 2 KB receive buffer, nothing read for a second, then slowly): zero windows and probes.
    static let zeroWindow = CLITests.root.appendingPathComponent("Tests/FramescopeCLITests/Fixtures/tcp-zero-window.pcap").path

    static var captures: [String] {
        let samples = (try? FileManager.default.contentsOfDirectory(atPath: CLITests.root.appendingPathComponent("samples").path)) ?? []
        let corpus = (try? FileManager.default.contentsOfDirectory(atPath: ExportCLITests.corpus)) ?? []
        let causes = (try? FileManager.default.contentsOfDirectory(atPath: CauseAttributionTests.folder.path)) ?? []
        return samples.filter { $0.hasSuffix(".pcap") }.sorted().map { CLITests.root.appendingPathComponent("samples/" + $0).path }
            + [zeroWindow] + causes.filter { $0.hasSuffix(".pcap") }.sorted().map { CauseAttributionTests.folder.appendingPathComponent($0).path }
            + corpus.sorted().map { ExportCLITests.corpus + "/" + $0 }
    }

    @Test func roundTripsDuplicateAcksAndZeroWindowsAreTsharks() throws {
        guard ExportCLITests.tshark != nil else { return oracleMissing("TCP context against tshark: no tshark") }
        if !FileManager.default.fileExists(atPath: ExportCLITests.corpus) { oracleMissing("TCP context on the corpus: no ../shared/corpus") }
        var compared = 0, timed = 0, duplicates = 0, zeroWindows = 0, windowFull = 0, handshakes = 0
        for capture in Self.captures {
            let result = try cli.run(["analyze", capture, "--dissector", "varint", "--format", "json", "--quiet"])
            let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(capture)")
            let connections = try #require(report["connections"] as? [[String: Any]])
            let truth = try tshark(capture)
            let name = (capture as NSString).lastPathComponent
            // Round trips of directions that carried no payload (their SYN and FIN) are in the
            // totals only: what the totals count beyond the listed ones, by direction.
            var unlisted = [0, 0], unlistedTruth = [0, 0]
            for c in connections {
                let id = try #require(c["id"] as? Int)
                #expect((c["initialRTT"] as? Double).map { ($0 * 1e9).rounded() } == truth.initialRTT[id].map { ($0 * 1e9).rounded() }, "\(name) #\(id): handshake")
                if c["initialRTT"] != nil { handshakes += 1 }
                let client = try #require(c["client"] as? String), server = try #require(c["server"] as? String)
                for (i, d) in try #require(c["directions"] as? [[String: Any]]).enumerated() {
                    let (from, to) = i == 0 ? (client, server) : (server, client)
                    let port = { (endpoint: String) in endpoint.split(separator: ":").last.map(String.init) ?? "" }
                    guard port(from) != port(to) else { continue }  // tshark's fields could not tell the directions apart
                    // What the receiver sent concerns this direction's data.
                    let theirs = truth.segments["\(id) \(port(to))>\(port(from))"] ?? Truth()
                    // …and what the sender did, its segments that filled the receiver's window.
                    let sent = truth.segments["\(id) \(port(from))>\(port(to))"] ?? Truth()
                    let tcp = d["tcp"] as? [String: Any] ?? [:]
                    let where_ = "\(name) #\(id) \(from) → \(to)"
                    #expect(tcp["duplicateAcks"] as? Int ?? 0 == theirs.duplicateAcks, "\(where_): duplicate ACKs")
                    #expect(tcp["zeroWindows"] as? Int ?? 0 == theirs.zeroWindows, "\(where_): zero windows")
                    #expect(tcp["windowFull"] as? Int ?? 0 == sent.windowFull, "\(where_): window full")
                    let rtt = tcp["ackRTT"] as? [String: Any] ?? [:]
                    let count = rtt["count"] as? Int ?? 0
                    unlisted[i] -= count
                    if d["bytes"] == nil {
                        #expect(tcp["ackRTT"] == nil, "\(where_): round trips of a direction without payload")
                        unlistedTruth[i] += theirs.rtts.count
                    } else {
                        #expect(count >= theirs.rtts.count, "\(where_): round trips")
                        #expect(abs((rtt["sum"] as? Double ?? 0) - theirs.rtts.reduce(0, +)) < 1e-9 * Double(max(1, count)), "\(where_): round-trip sum")
                        #expect(abs((rtt["max"] as? Double ?? 0) - (theirs.rtts.max() ?? 0)) < 1e-9, "\(where_): longest round trip")
                    }
                    compared += 1
                    timed += theirs.rtts.count
                    duplicates += theirs.duplicateAcks
                    zeroWindows += theirs.zeroWindows
                    windowFull += sent.windowFull
                }
            }
            let totals = try #require(report["tcp"] as? [String: Any], "\(name): TCP totals")
            for (i, key) in ["clientToServer", "serverToClient"].enumerated() {
                unlisted[i] += try #require((totals[key] as? [String: Any])?["ackRTTSamples"] as? Int, "\(name): \(key) round trips")
                #expect(unlisted[i] >= unlistedTruth[i], "\(name) \(key): round trips of directions without payload")
            }
        }
        print("TCP context against tshark: \(compared) directions, \(timed) round trips, \(duplicates) duplicate ACKs, \(zeroWindows) zero windows, \(windowFull) window full, \(handshakes) handshakes")
        // The comparison must have had something to compare.
        #expect(timed > 0 && handshakes > 0 && zeroWindows >= 2 && windowFull > 0)
        if FileManager.default.fileExists(atPath: ExportCLITests.corpus) { #expect(duplicates > 0) }
    }

    /// The headline says whether bytes were lost on the wire, and what a naive receive loop costs.
    @Test func theHeadlineTellsTheNetworkFromTheReceiveLoop() throws {
        let capture = CLITests.root.appendingPathComponent("samples/im-varint.pcap").path
        let text = try cli.run(["analyze", capture, "--dissector", "varint"]).stdout
        #expect(text.contains("TCP: no byte was lost on the wire: a receiver that reads one message per read() loses 66.8% of them — fix the receive loop"))
        #expect(text.contains("  client → server: data to its ACK "))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(cli.run(["analyze", capture, "--dissector", "varint", "--format", "json"]).stdout.utf8)) as? [String: Any])
        let tcp = try #require(json["tcp"] as? [String: Any])
        #expect(tcp["handshakes"] as? Int == 1)
        let down = try #require(tcp["serverToClient"] as? [String: Any])
        #expect(down["retransmissions"] as? Int == 0 && down["duplicateAcks"] as? Int == 0 && (down["ackRTTSamples"] as? Int ?? 0) > 0)
        #expect(tcp["gapBytes"] as? Int == 0)
    }

    /// A capture that missed packets the endpoints received (no sender repeated a byte) must not
    /// be told "no byte was lost": the capture lost them, and says how many.
    @Test func aLossyCaptureIsNotCalledClean() throws {
        let capture = ExportCLITests.corpus + "/openflow13-lossy.pcapng"
        guard FileManager.default.fileExists(atPath: capture) else { return oracleMissing("a lossy capture: no ../shared/corpus") }
        let text = try cli.run(["analyze", capture, "--dissector", "length:offset=2,width=2"]).stdout
        #expect(!text.contains("no byte was lost"))
        #expect(text.contains("TCP: no segment was sent twice, but the capture missed 13164 bytes the endpoints received"))
        #expect(text.contains("11 out of order"))
    }
}
