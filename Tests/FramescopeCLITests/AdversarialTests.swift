import FramescopeSynthetic
import FramescopeCore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Hostile captures made here, run through the real binary in a child process: each case
/// checks the events it must report, the exit status, and the child's peak RSS.
@Suite(.serialized) struct AdversarialTests {
    /// SYNs in the flood case: enough to force evictions fifty times over, small enough for a
    /// debug build in the test suite (a release run with 1,000,000 is in the closing note).
    static let synFloodSize = ProcessInfo.processInfo.environment["FRAMESCOPE_SYN_FLOOD"].flatMap(Int.init) ?? 400_000
    static let server = Endpoint("10.9.0.1:9000")!
    static let client = Endpoint("10.9.0.2:40000")!

    /// Under AddressSanitizer (scripts/test-asan) shadow memory dominates RSS: ceilings scale.
    static let ceilingScale: Double = ProcessInfo.processInfo.environment["FRAMESCOPE_ASAN"] == nil ? 1 : 20

    struct Outcome {
        var status: Int32
        var report: [String: Any]
        var peakMiB: Double
        var stderr: String
    }

    /// Runs the binary under GNU time (posix_spawn), for its exit status and peak RSS.
    func measured(_ arguments: [String]) throws -> Outcome {
        let out = scratchDirectory + "framescope-adv-\(UUID().uuidString)"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, out + ".out", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, out + ".err", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        // The peak is GNU time's, not wait4's: a child spawned from this (large) test process
        // inherits its high-water RSS across exec, and read 151 MiB for a few kilobytes of input.
        let time = "/usr/bin/time"
        guard FileManager.default.isExecutableFile(atPath: time) else { throw Failure("needs GNU time (apt-get install time, or scripts/install-deps --test)") }
        let argv = ([time, "-f", "%M", "-o", out + ".rss", CLITests.binary] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, time, &actions, nil, argv, environ) == 0 else { throw Failure("spawn failed") }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        let stdout = (try? Data(contentsOf: URL(fileURLWithPath: out + ".out"))) ?? Data()
        let stderr = (try? String(contentsOfFile: out + ".err", encoding: .utf8)) ?? ""
        let report = (try? JSONSerialization.jsonObject(with: stdout) as? [String: Any]) ?? [:]
        let kilobytes = (try? String(contentsOfFile: out + ".rss", encoding: .utf8)).flatMap { $0.split(separator: "\n").last.flatMap { Double($0) } }
        guard let kilobytes else { throw Failure("GNU time wrote no peak RSS") }
        return Outcome(status: (status >> 8) & 0xFF, report: report, peakMiB: kilobytes / 1024, stderr: stderr)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ d: String) { description = d }
    }

    /// A capture built packet by packet: handshake helpers and raw segments.
    struct Hostile {
        var writer = CaptureFileWriter(linkType: .ethernet)
        var clock: Int64 = 1_700_000_000_000_000_000
        let builder = PacketBuilder()

        mutating func add(_ packet: [UInt8]) {
            clock += 1_000
            writer.add(packet, at: Timestamp(nanoseconds: clock))
        }

        mutating func connect(_ client: Endpoint, _ server: Endpoint, clientISN: UInt32 = 1000, serverISN: UInt32 = 5000) {
            add(builder.tcp(from: client, to: server, sequence: clientISN, flags: [.syn], mss: 1460))
            add(builder.tcp(from: server, to: client, sequence: serverISN, flags: [.syn, .ack], mss: 1460))
        }

        mutating func send(_ from: Endpoint, _ to: Endpoint, seq: UInt32, _ payload: [UInt8], flags: TCPFlags = [.ack, .psh], window: UInt16 = 65535) {
            add(builder.tcp(from: from, to: to, sequence: seq, flags: flags, payload: payload, window: window))
        }

        func save() -> String {
            let path = scratchDirectory + "framescope-hostile-\(UUID().uuidString).pcap"
            FileManager.default.createFile(atPath: path, contents: Data(writer.bytes))
            return path
        }
    }

    func figures(_ report: [String: Any], port: Int) -> [String: Any]? {
        let connections = report["connections"] as? [[String: Any]] ?? []
        let c = connections.first { ($0["server"] as? String)?.hasSuffix(":\(port)") == true }
        return ((c?["directions"] as? [[String: Any]])?.first)?["figures"] as? [String: Any]
    }

    @Test func everyMalformedLengthKindIsReportedAndNothingHugeIsAllocated() throws {
        // One connection per kind, each to its own server port with its own SPEC.
        let cases: [(port: UInt16, spec: String, stream: [UInt8], reason: String)] = [
            (9001, "length:offset=4,width=4,magic=000000ff", [0, 0, 0, 0xFE, 0, 0, 0, 4, 1, 2, 3, 4], "bad-magic"),
            (9002, "length:offset=0,width=4", [0xFF, 0xFF, 0xFF, 0xF0] + [UInt8](repeating: 7, count: 100), "length-too-large"),  // claims 4 GiB
            (9003, "length:offset=0,width=4,adjust=-8", [0, 0, 0, 2, 9, 9], "length-smaller-than-header"),
            (9004, "length:offset=0,width=4,encoding=ascii", Array("00x1abcd".utf8), "non-digit-length"),
            (9005, "varint", [UInt8](repeating: 0xFF, count: 10) + [1], "varint-too-long"),
            (9006, "delimiter:\\n,max=100", [UInt8](repeating: 0x61, count: 300) + [0x0A], "delimiter-not-found"),
        ]
        var capture = Hostile()
        for (n, c) in cases.enumerated() {
            let client = Endpoint(address: Self.client.address, port: UInt16(41000 + n))
            let server = Endpoint(address: Self.server.address, port: c.port)
            capture.connect(client, server)
            capture.send(client, server, seq: 1001, c.stream)
        }
        let path = capture.save()
        let outcome = try measured(["analyze", path, "--format", "json", "-t", "1"] + cases.flatMap { ["--dissector", "\($0.port)=\($0.spec)"] })
        #expect(outcome.status == 0, "\(outcome.stderr)")  // findings are not failures
        let events = outcome.report["events"] as? [[String: Any]] ?? []
        for c in cases {
            let f = try #require(figures(outcome.report, port: Int(c.port)), "port \(c.port)")
            #expect((f["malformedByReason"] as? [String: Int])?[c.reason] == 1, "\(c.reason)")
            #expect(events.contains { $0["kind"] as? String == "malformed" && $0["reason"] as? String == c.reason && $0["offset"] as? Int == 0 })
        }
        #expect(outcome.peakMiB < 150 * Self.ceilingScale, "peak RSS \(outcome.peakMiB) MiB")
    }

    @Test func aHundredThousandTinyOutOfOrderSegmentsStayWithinTheBufferLimits() throws {
        var capture = Hostile()
        capture.connect(Self.client, Self.server)
        // The first byte never arrives; 100,000 one-byte segments follow, in reverse order.
        for i in stride(from: 100_000, through: 1, by: -1) {
            capture.send(Self.client, Self.server, seq: 1001 + UInt32(i), [0x61 + UInt8(i % 26)], flags: [.ack])
        }
        let path = capture.save()
        let outcome = try measured(["analyze", path, "--dissector", "lines", "--format", "json", "-t", "1", "--max-buffer-per-direction", "1M"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let limits = try #require(outcome.report["limits"] as? [String: Int])
        #expect(limits["bufferLimitGaps"]! > 0)  // the per-direction limits were reached and said so
        #expect(limits["peakBufferedBytes"]! <= (1 << 20) + 65)
        let connection = try #require((outcome.report["connections"] as? [[String: Any]])?.first)
        let up = try #require((connection["directions"] as? [[String: Any]])?.first)
        // Every captured byte is accounted for: delivered, or arrived after its hole was skipped.
        #expect((up["bytes"] as? Int ?? 0) + limits["lateBytes"]! == 100_000)
        #expect(limits["lateBytes"]! > 0)
        #expect(outcome.peakMiB < 200 * Self.ceilingScale, "peak RSS \(outcome.peakMiB) MiB")
    }

    @Test func aSynFloodKeepsTheFlowTableBounded() throws {
        // SYNs on distinct 4-tuples, written from one template packet.
        var template = PacketBuilder().tcp(from: Self.client, to: Self.server, sequence: 1, flags: [.syn])
        var writer = CaptureFileWriter(linkType: .ethernet)
        for i in 0..<Self.synFloodSize {
            template[26] = UInt8(truncatingIfNeeded: i >> 16)  // source address, last bytes
            template[27] = UInt8(truncatingIfNeeded: i >> 8)
            template[34] = UInt8(truncatingIfNeeded: i)        // source port, high byte
            writer.add(template, at: Timestamp(nanoseconds: 1_700_000_000_000_000_000 + Int64(i) * 1000))
        }
        let path = scratchDirectory + "framescope-synflood-\(UUID().uuidString).pcap"
        FileManager.default.createFile(atPath: path, contents: Data(writer.bytes))
        writer = CaptureFileWriter(linkType: .ethernet)
        let outcome = try measured([
            "analyze", path, "--dissector", "varint", "--format", "json", "--max-connections", "20000", "--connections", "worst", "--top", "1000",
        ])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let limits = try #require(outcome.report["limits"] as? [String: Int])
        #expect(limits["connectionLimitEvictions"]! >= Self.synFloodSize - 20_000)
        let totals = try #require(outcome.report["totals"] as? [String: Any])
        #expect(totals["connections"] as? Int == Self.synFloodSize)
        #expect((outcome.report["connections"] as? [[String: Any]])?.count == 1000)
        #expect(totals["foldedConnections"] as? Int == Self.synFloodSize - 1000)
        #expect((outcome.report["warnings"] as? [String])?.contains { $0.contains("memory limits were reached") } == true)
        #expect(outcome.peakMiB < 300 * Self.ceilingScale, "peak RSS \(outcome.peakMiB) MiB")
        try? FileManager.default.removeItem(atPath: path)
    }

    @Test func overlappingRetransmissionsWithOtherBytesAreConflicts() throws {
        var capture = Hostile()
        capture.connect(Self.client, Self.server)
        let message: [UInt8] = [20] + [UInt8](repeating: 0x41, count: 20)
        capture.send(Self.client, Self.server, seq: 1001, message)
        capture.send(Self.client, Self.server, seq: 1006, [UInt8](repeating: 0x5A, count: 8))  // a differing copy of bytes 5..<13
        capture.send(Self.client, Self.server, seq: 1022, message)
        let path = capture.save()
        let flows = try measured(["flows", path, "--format", "json"])
        let direction = try #require(((flows.report["connections"] as? [[String: Any]])?.first?["directions"] as? [[String: Any]])?.first)
        let conflicts = try #require(direction["conflicts"] as? [String: Any])
        #expect(conflicts["count"] as? Int == 1 && conflicts["bytes"] as? Int == 8)
        #expect(((conflicts["list"] as? [[String: Any]])?.first)?["offset"] as? Int == 5)
        let analysis = try measured(["analyze", path, "--dissector", "varint", "--format", "json"])
        #expect(figures(analysis.report, port: 9000)?["messages"] as? Int == 2)  // the first copy won
    }

    @Test func zeroWindowStallsAndProbesDoNotCorruptTheStream() throws {
        var capture = Hostile()
        capture.connect(Self.client, Self.server)
        let first: [UInt8] = [5] + Array("hello".utf8)
        capture.send(Self.client, Self.server, seq: 1001, first)
        capture.send(Self.server, Self.client, seq: 5001, [], flags: [.ack], window: 0)  // the receiver stalls
        for _ in 0..<50 {  // zero-window probes: the next byte, again and again
            capture.send(Self.client, Self.server, seq: 1007, [3], flags: [.ack])
        }
        capture.send(Self.server, Self.client, seq: 5001, [], flags: [.ack], window: 65535)
        capture.send(Self.client, Self.server, seq: 1007, [3] + Array("abc".utf8) + [2] + Array("xy".utf8))
        let path = capture.save()
        let outcome = try measured(["analyze", path, "--dissector", "varint", "--format", "json"])
        let f = try #require(figures(outcome.report, port: 9000))
        #expect(f["messages"] as? Int == 3 && f["malformed"] == nil)  // zero figures are left out
    }

    @Test func truncatedRecordsAndTrailingGarbageReportWhatWasRead() throws {
        var capture = Hostile()
        capture.connect(Self.client, Self.server)
        capture.send(Self.client, Self.server, seq: 1001, [3] + Array("abc".utf8))
        let good = capture.writer.bytes
        for (name, bytes) in [("truncated", Array(good.dropLast(5))), ("garbage", good + [UInt8](repeating: 0xEE, count: 37))] {
            let path = scratchDirectory + "framescope-\(name)-\(UUID().uuidString).pcap"
            FileManager.default.createFile(atPath: path, contents: Data(bytes))
            let outcome = try measured(["analyze", path, "--dissector", "varint", "--format", "json"])
            #expect(outcome.status == 1, "\(name)")  // the input broke part-way: documented exit status 1
            #expect(outcome.stderr.contains(path) && outcome.stderr.contains("broken after"), "\(name): \(outcome.stderr)")
            #expect((outcome.report["packets"] as? [String: Any])?["total"] as? Int ?? 0 >= 2, "\(name): packets before the break are analyzed")
        }
    }

    @Test func aPcapngWithAnUnknownBlockTypeIsReadPastIt() throws {
        var blocks: [UInt8] = []
        func le32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
        func block(_ type: UInt32, _ body: [UInt8]) { blocks += le32(type) + le32(UInt32(12 + body.count)) + body + le32(UInt32(12 + body.count)) }
        block(0x0A0D_0D0A, le32(0x1A2B_3C4D) + [1, 0, 0, 0] + [UInt8](repeating: 0xFF, count: 8))
        block(1, [1, 0, 0, 0] + le32(65535))
        block(0x0BAD_F00D, [1, 2, 3, 4, 5, 6, 7, 8])  // an unknown block type
        let packet = PacketBuilder().tcp(from: Self.client, to: Self.server, sequence: 1, flags: [.syn])
        var epb = le32(0) + le32(0) + le32(1) + le32(UInt32(packet.count)) + le32(UInt32(packet.count)) + packet
        while epb.count % 4 != 0 { epb.append(0) }
        block(6, epb)
        let path = scratchDirectory + "framescope-unknown-block-\(UUID().uuidString).pcapng"
        FileManager.default.createFile(atPath: path, contents: Data(blocks))
        let outcome = try measured(["flows", path, "--format", "json"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect((outcome.report["packets"] as? [String: Any])?["tcp"] as? Int == 1)
    }
}
