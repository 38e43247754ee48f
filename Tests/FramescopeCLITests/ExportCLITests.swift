import Foundation
import Testing

/// `framescope export --format lua`: the dissector, run by tshark on the recorded samples,
/// frames as many messages per direction as framescope does (where the SPEC frames cleanly).
/// `--format kaitai`: the .ksy, run on each extracted stream by scripts/ksy-run.py (the Kaitai
/// runtime with the .ksy's semantics run by hand: no Kaitai compiler is packaged for Debian or
/// PyPI), frames as many.
@Suite struct ExportCLITests {
    struct Case: CustomStringConvertible, Sendable {
        var capture: String
        var spec: String
        /// Bad headers framescope finds in the client-to-server totals, where tshark must stop too.
        var malformed = 0
        var description: String { "\((capture as NSString).lastPathComponent) \(spec)" }
    }

    /// The corpus's captures: `../shared/corpus` beside the checkout, or FRAMESCOPE_CORPUS's.
    static let corpus = (ProcessInfo.processInfo.environment["FRAMESCOPE_CORPUS"].map { URL(fileURLWithPath: $0) }
        ?? CLITests.root.deletingLastPathComponent().appendingPathComponent("shared/corpus")).appendingPathComponent("captures").path

    /// The samples and the LDAP recording, and corpus captures whose preset frames them cleanly.
    static let cases = [
        Case(capture: "samples/seed-8byte-header.pcap", spec: "length:offset=4,width=4"),
        Case(capture: "samples/seed-7byte-header.pcap", spec: "length:offset=5,width=2,type=2:2"),
        Case(capture: "samples/seed-ascii10-header.pcap", spec: "length:offset=6,width=4,encoding=ascii"),
        Case(capture: "samples/seed-v01-header.pcap", spec: "length:offset=4,width=8,encoding=ascii,adjust=-12,magic=56302e31,type=12:8"),
        Case(capture: "samples/im-varint.pcap", spec: "varint"),
        Case(capture: "samples/im-protobuf.pcap", spec: "varint"),
        Case(capture: "Tests/FramescopeCLITests/Fixtures/ldap/ldap-full.pcap", spec: "preset:ldap"),
    ] + [
        ("dns-tcp-multirequest.pcap", "preset:dns"), ("mqtt-big-publish.pcap", "preset:mqtt"), ("bgp-4byte-asn.pcap", "preset:bgp"),
        ("kafka.pcapng", "preset:kafka"), ("modbus.pcap", "preset:modbus"), ("tls-mtu300.pcap", "preset:tls"), ("s7comm-tpkt.pcap", "preset:tpkt"),
        ("iec104.pcap", "preset:iec104"), ("amqp-frame-end.pcap", "preset:amqp"), ("hislip-u64.pcap", "preset:hislip"), ("enip.pcap", "preset:enip"),
        ("pptp-bigendian.pcap", "preset:pptp"), ("smb2-nbss.pcap", "preset:nbss"), ("git-pktline.pcapng", "preset:git"),
        ("opcua-null.pcap", "preset:opcua"), ("openflow10.pcap", "preset:openflow"),
    ].map { Case(capture: "\(corpus)/\($0.0)", spec: $0.1, malformed: $0.0 == "modbus.pcap" ? 1 : 0) }

    static let tshark = ["/usr/bin/tshark", "/usr/local/bin/tshark"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Messages per direction as tshark frames them with the exported dissector.
    func tsharkCounts(_ c: Case, path: String, roles: [String: String], script: String, field: String) throws -> [String: Int] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.tshark, "tshark is missing: scripts/install-deps --test installs it"))
        process.arguments = [
            "-X", "lua_script:\(script)", "-r", path, "-o", "tcp.desegment_tcp_streams:TRUE",
"-T", "fields", "-e", "ip.src", "-e", "ipv6.src", "-e", "tcp.srcport", "-e", "ip.dst", "-e", "ipv6.dst", "-e", "tcp.dstport", "-e", field,
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        var counts = ["clientToServer": 0, "serverToClient": 0]
        for line in out.split(separator: "\n") {
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard columns.count == 7, !columns[6].isEmpty else { continue }
            func endpoint(_ v4: Substring, _ v6: Substring, _ port: Substring) -> String { v4.isEmpty ? "[\(v6)]:\(port)" : "\(v4):\(port)" }
            let key = endpoint(columns[0], columns[1], columns[2]) + " " + endpoint(columns[3], columns[4], columns[5])
            counts[roles[key] ?? "unknown", default: 0] += columns[6].split(separator: ",").count
        }
        return counts
    }

    /// The capture's path and framescope's report on it (nil: a corpus capture that is not there).
    /// Exports frame from a direction's first captured byte, as `--mid-stream start` does.
    func analyzed(_ c: Case) throws -> (path: String, report: [String: Any])? {
        let path = c.capture.hasPrefix("/") ? c.capture : CLITests.root.appendingPathComponent(c.capture).path
        guard FileManager.default.fileExists(atPath: path) else {
            oracleMissing("\(c): no ../shared/corpus")
            return nil
        }
        let run = try CLITests().run(["analyze", path, "--dissector", c.spec, "--mid-stream", "start", "--format", "json", "--quiet"])
        return (path, try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]))
    }

    @Test(arguments: cases) func luaDissectorFramesAsFramescope(c: Case) throws {
        guard let (path, report) = try analyzed(c) else { return }
        let totals = report["totals"] as! [String: Any]
        // Which way each segment goes, by framescope's client and server of its connection.
        var roles: [String: String] = [:]
        for connection in report["connections"] as! [[String: Any]] {
            let (client, server) = (connection["client"] as! String, connection["server"] as! String)
            roles[client + " " + server] = "clientToServer"
            roles[server + " " + client] = "serverToClient"
        }
        let ports = Set((report["connections"] as! [[String: Any]]).compactMap { ($0["server"] as? String)?.split(separator: ":").last.flatMap { UInt16($0) } })
        let script = scratchDirectory + "framescope-export-\(UUID().uuidString).lua"
        let exported = try CLITests().run(["export", c.spec, "--format", "lua", "-o", script] + ports.sorted().flatMap { ["--port", String($0)] })
        #expect(exported.status == 0, "\(exported.stderr)")
        let id = try #require(try String(contentsOfFile: script, encoding: .utf8).firstMatch(of: /Proto\("(fs_[a-z0-9_]+)"/)?.1)
        let counts = try tsharkCounts(c, path: path, roles: roles, script: script, field: "\(id).length")
        for direction in ["clientToServer", "serverToClient"] {
            let f = totals[direction] as! [String: Any]
            // Clean, but for the bad headers a case names (modbus stream 5 ends in 17 bytes whose
            // protocol identifier is not 0, where both stop): so must tshark frame it.
            let malformed = direction == "clientToServer" ? c.malformed : 0
            #expect(f["malformed"] as? Int == malformed && f["damagedByGaps"] as? Int == 0, "\(c) \(direction) is clean")
            #expect(counts[direction] == f["messages"] as? Int, "\(c) \(direction): tshark \(counts[direction] ?? -1), framescope \(f["messages"]!)")
        }
    }

    @Test(arguments: cases) func kaitaiDescriptionFramesAsFramescope(c: Case) throws {
        guard let (path, report) = try analyzed(c) else { return }
        let totals = report["totals"] as! [String: Any]
        let ksy = scratchDirectory + "framescope-export-\(UUID().uuidString).ksy"
        let exported = try CLITests().run(["export", c.spec, "--format", "kaitai", "-o", ksy])
        #expect(exported.status == 0, "\(exported.stderr)")
        let streams = scratchDirectory + "framescope-streams-\(UUID().uuidString)"
        _ = try CLITests().run(["extract", path, "--out", streams, "--quiet"])
        let index = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: streams + "/index.json"))) as? [String: Any])
        var counts = ["clientToServer": 0, "serverToClient": 0]
        for stream in index["streams"] as! [[String: Any]] {
            guard let file = stream["file"] as? String, (stream["bytes"] as? Int ?? 0) > 0 else { continue }
            let run = try CLITests().run([CLITests.root.appendingPathComponent("scripts/ksy-run.py").path, ksy, streams + "/" + file], executable: "/usr/bin/env")
            let parsed = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(c): \(run.stderr)")
            let direction = stream["direction"] as? String == "client-to-server" ? "clientToServer" : "serverToClient"
            counts[direction, default: 0] += parsed["frames"] as! Int
        }
        for direction in ["clientToServer", "serverToClient"] {
            let f = totals[direction] as! [String: Any]
            #expect(counts[direction] == f["messages"] as? Int, "\(c) \(direction): .ksy \(counts[direction] ?? -1), framescope \(f["messages"]!)")
        }
    }

    @Test func kaitaiSaysWhatItCannotDescribe() throws {
        let typed = try CLITests().run(["export", "length:offset=2,width=3,endian=little,magic=a5@1,type=0:1", "--format", "kaitai"])
        #expect(typed.status == 0 && typed.stdout.contains("contents: [0xa5]") && typed.stdout.contains("value: '(len_raw[2] << 16) | (len_raw[1] << 8) | len_raw[0]'"))
        let lines = try CLITests().run(["export", "lines", "--format", "kaitai"])
        #expect(lines.status == 0 && lines.stdout.contains("terminator: 0x0a"))
        for spec in ["delimiter", "preset:postgres", "preset:http2"] {
            let refused = try CLITests().run(["export", spec, "--format", "kaitai"])
            #expect(refused.status == 64, "\(spec): \(refused.stderr)")
        }
    }

    @Test func nettyDecoderAndWhatItCannotSay() throws {
        let binary = try CLITests().run(["export", "length:offset=4,width=4,magic=000000ff@0,type=8:4", "--format", "netty"])
        #expect(binary.stdout.contains("new LengthFieldBasedFrameDecoder(") && binary.stdout.contains("4, // lengthFieldOffset"))
        #expect(binary.stdout.contains("check the magic 000000ff at offset 0"))
        let varint = try CLITests().run(["export", "varint", "--format", "netty"])
        #expect(varint.stdout.contains("ProtobufVarint32FrameDecoder"))
        let ascii = try CLITests().run(["export", "length:offset=6,width=4,encoding=ascii", "--format", "netty"])
        #expect(ascii.stdout.contains("override getUnadjustedFrameLength"))
        let postgres = try CLITests().run(["export", "preset:postgres", "--format", "lua"])
        #expect(postgres.status == 64 && postgres.stderr.contains("not a length-field SPEC"))
    }
}
