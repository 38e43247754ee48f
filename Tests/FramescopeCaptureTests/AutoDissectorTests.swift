import Foundation
import Testing

/// `--dissector auto` picks the right framing: on every seed sample, and on the corpus captures
/// of the protocols it claims (README). Each choice is pinned, and it must frame the capture
/// exactly as the reference SPEC does.
@Suite struct AutoDissectorTests {
    static let binary: String = {
        let debug = repositoryRoot.appendingPathComponent(".build/debug/framescope").path
        let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("framescope").path
        return FileManager.default.isExecutableFile(atPath: besideTests) ? besideTests : debug
    }()

    struct Case: Sendable, CustomStringConvertible {
        var capture: String
        var chosen: [String]  // per server port, in port order
        var reference: String
        var description: String { capture }
    }

    static let samples: [Case] = [
        Case(capture: "samples/im-varint.pcap", chosen: ["varint"], reference: "varint"),
        Case(capture: "samples/im-protobuf.pcap", chosen: ["varint"], reference: "varint"),
        Case(capture: "samples/seed-0xff-command.pcap", chosen: ["length:offset=4,width=4,magic=000000ff"], reference: "length:offset=4,width=4,magic=000000ff,type=8:4"),
        Case(capture: "samples/seed-7byte-header.pcap", chosen: ["length:offset=5,width=2,magic=0001"], reference: "length:offset=5,width=2,type=2:2"),
        Case(capture: "samples/seed-ascii10-header.pcap", chosen: ["length:offset=6,width=4,encoding=ascii,magic=494d"], reference: "length:offset=6,width=4,encoding=ascii"),
        Case(capture: "samples/seed-v01-header.pcap", chosen: ["length:offset=4,width=8,encoding=ascii,adjust=-12,magic=56302e31"], reference: "length:offset=4,width=8,encoding=ascii,adjust=-12,magic=56302e31,type=12:8"),
        Case(capture: "samples/seed-8byte-header.pcap", chosen: ["length:offset=4,width=4,magic=00000007"], reference: "length:offset=4,width=4"),
        Case(capture: "samples/lines-crlf.pcap", chosen: ["delimiter"], reference: "delimiter"),
    ]

    static let corpus: [Case] = [
        Case(capture: "dns-tcp-multirequest", chosen: ["length:offset=1,encoding=varint"], reference: "preset:dns"),
        Case(capture: "tls-mtu300", chosen: ["length:offset=3,width=2"], reference: "preset:tls"),
        Case(capture: "tls-rawip", chosen: ["length:offset=3,width=2"], reference: "preset:tls"),
        Case(capture: "bgp-4byte-asn", chosen: ["length:offset=16,width=2,adjust=-18,magic=ffffffff"], reference: "preset:bgp"),
        Case(capture: "bgp-ppp", chosen: ["length:offset=16,width=2,adjust=-18,magic=ffffffff"], reference: "preset:bgp"),
        Case(capture: "mysql-query-attrs", chosen: ["length:offset=0,width=3,endian=little,adjust=1"], reference: "preset:mysql"),
        Case(capture: "kafka", chosen: ["length:offset=0,width=4"], reference: "preset:kafka"),
        Case(capture: "mqtt-big-publish", chosen: ["length:offset=1,encoding=varint"], reference: "preset:mqtt"),
        Case(capture: "s7comm-tpkt", chosen: ["length:offset=2,width=2,adjust=-4,magic=03"], reference: "preset:tpkt"),
        Case(capture: "smb2-nbss", chosen: ["length:offset=0,width=4"], reference: "preset:nbss"),
        Case(capture: "smb-nbss-bigendian", chosen: ["length:offset=0,width=4"], reference: "preset:nbss"),
        Case(capture: "iec104", chosen: ["length:offset=1,width=1,magic=68"], reference: "preset:iec104"),
        Case(capture: "pptp-bigendian", chosen: ["length:offset=0,width=2,adjust=-2"], reference: "preset:pptp"),
        Case(capture: "openflow10", chosen: ["length:offset=2,width=2,adjust=-4,magic=01"], reference: "preset:openflow"),
        Case(capture: "opcua-null", chosen: ["length:offset=4,width=2,endian=little,adjust=-6"], reference: "preset:opcua"),
        Case(capture: "hislip-u64", chosen: ["length:offset=12,width=4,magic=4853"], reference: "preset:hislip"),
        Case(capture: "amqp-frame-end", chosen: ["length:offset=3,width=4,adjust=1"], reference: "preset:amqp"),
        Case(capture: "redis-sll", chosen: ["delimiter"], reference: "delimiter"),
        Case(capture: "smtp", chosen: ["delimiter"], reference: "delimiter"),
        Case(capture: "pop3", chosen: ["delimiter"], reference: "delimiter"),
    ]

    func run(_ arguments: [String]) throws -> (stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (stdout, stderr)
    }

    func totals(_ json: String) throws -> [Int] {
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let all = try #require((report["totals"] as? [String: Any])?["all"] as? [String: Any])
        return [all["messages"] as! Int, all["malformed"] as! Int, all["incompleteAtEnd"] as! Int]
    }

    func check(_ c: Case, path: String) throws {
        let auto = try run(["analyze", path, "--dissector", "auto", "--format", "json"])
        let chosen = auto.stderr.split(separator: "\n").compactMap { line -> String? in
            guard let start = line.range(of: ": '"), let end = line.range(of: "' (", range: start.upperBound..<line.endIndex) else { return nil }
            return String(line[start.upperBound..<end.lowerBound])
        }
        #expect(chosen == c.chosen, "\(c.capture): \(auto.stderr)")
        let reference = try run(["analyze", path, "--dissector", c.reference, "--format", "json"])
        #expect(try totals(auto.stdout) == totals(reference.stdout), "\(c.capture): frames differently from \(c.reference)")
    }

    @Test(arguments: samples)
    func seedSamples(c: Case) throws {
        try check(c, path: repositoryRoot.appendingPathComponent(c.capture).path)
    }

    @Test(arguments: corpus)
    func corpusCaptures(c: Case) throws {
        guard let corpus = corpusDirectory else {
            print("SKIP auto on the corpus: ../shared/corpus not found")
            return
        }
        let file = try FileManager.default.contentsOfDirectory(atPath: corpus.appendingPathComponent("captures").path)
            .first { $0.hasPrefix(c.capture + ".") }
        try check(c, path: corpus.appendingPathComponent("captures/\(try #require(file))").path)
    }
}
