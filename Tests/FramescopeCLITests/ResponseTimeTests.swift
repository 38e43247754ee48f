import FramescopeCore
import Foundation
import Testing

/// Response time by request type, Wireshark's service response time for any framed protocol:
/// requests answered in order, timed from the request's last segment to the response's.
@Suite struct ResponseTimeTests {
    let cli = CLITests()

    func responseTimes(_ capture: String, _ spec: String) throws -> [String: Any] {
        let result = try cli.run(["analyze", capture, "--dissector", spec, "--format", "json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        return try #require(json["responseTimes"] as? [String: Any])
    }

    /// Twenty pipelined DNS queries in one segment, answered one by one: tshark's `dns.time`
    /// pairs them by ID, framescope in order; the times agree.
    @Test func pipelinedDNSQueriesTakeTsharksTimes() throws {
        let capture = ExportCLITests.corpus + "/dns-tcp-multirequest.pcap"
        guard FileManager.default.fileExists(atPath: capture) else { return oracleMissing("response times: no ../shared/corpus") }
        let fields = try cli.run(["-r", capture, "-T", "fields", "-e", "dns.time"], executable: try #require(ExportCLITests.tshark))
        let theirs = fields.stdout.split(separator: "\n").compactMap { Double($0) }.sorted()
        #expect(theirs.count == 20)
        let times = try responseTimes(capture, "preset:dns")
        #expect(times["requestResponse"] as? Bool == true)
        #expect(times["paired"] as? Int == theirs.count && times["unpaired"] as? Int == 0 && times["unanswered"] as? Int == 0)
        let all = try #require((times["byType"] as? [String: Any])?["all"] as? [String: Any])
        #expect(all["requests"] as? Int == theirs.count)
        #expect(abs((all["max"] as! Double) - theirs.last!) < 1e-6)
        #expect(abs((all["min"] as! Double) - theirs.first!) < 1e-6)
        // Quantiles from a histogram of 1/64 precision.
        let median = theirs[theirs.count / 2 - 1]...theirs[theirs.count / 2]
        let p50 = all["p50"] as! Double
        #expect(p50 >= median.lowerBound * 0.98 && p50 <= median.upperBound * 1.02, "\(p50) against \(median)")
    }

    /// PostgreSQL: a Query is answered by ReadyForQuery, the rows in between belong to the answer;
    /// the startup and its password are no request.
    @Test func postgresQueriesAreTimedToReadyForQuery() throws {
        let capture = ExportCLITests.corpus + "/pgsql-greenhouse.pcap"
        guard FileManager.default.fileExists(atPath: capture) else { return oracleMissing("response times: no ../shared/corpus") }
        let times = try responseTimes(capture, "preset:postgres")
        #expect(times["requestResponse"] as? Bool == true)
        let byType = try #require(times["byType"] as? [String: Any])
        #expect(Array(byType.keys) == ["Query"])
        #expect((byType["Query"] as? [String: Any])?["requests"] as? Int == 84)
        let text = try cli.run(["analyze", capture, "--dissector", "preset:postgres"]).stdout
        #expect(text.contains("response time by request type (84 requests answered in order"))
        #expect(text.contains("  Query ×84: p50 "))
        // The HTML table shows the JSON's figures (the times in ms).
        let html = try cli.run(["analyze", capture, "--dissector", "preset:postgres", "--format", "html"]).stdout
        let query = try #require(byType["Query"] as? [String: Any])
        let regex = try NSRegularExpression(pattern: #"data-json="responseTimes\.byType\.Query\.(\w+)" data-value="([^"]+)"(?: data-scale="1000")?>([^<]+)<"#)
        let cells = regex.matches(in: html, range: NSRange(html.startIndex..., in: html)).map { m in
            (1...3).map { String(html[Range(m.range(at: $0), in: html)!]) }
        }
        #expect(cells.count == 4)
        for cell in cells {
            let json = try #require((query[cell[0]] as? NSNumber)?.doubleValue, "\(cell[0])")
            #expect(Double(cell[1]) == json, "\(cell[0])")
            #expect(abs(Double(cell[2].replacingOccurrences(of: ",", with: ""))! - (cell[0] == "requests" ? json : json * 1000)) < 0.001, "\(cell[0])")
        }
    }

    /// A server that pushes more than it answers is no request/response protocol: the times are
    /// in the JSON, flagged, and the text leaves them out.
    @Test func pushedMessagesAreNotCalledResponses() throws {
        let times = try responseTimes(CLITests.sample, "varint")
        #expect(times["requestResponse"] as? Bool == false)
        // 200 server messages against 20 client ones (once a connection is seen to push, its
        // messages are only counted).
        #expect((times["unpaired"] as? Int ?? 0) >= 180 && (times["paired"] as? Int ?? 0) <= 20)
        let text = try cli.run(["analyze", CLITests.sample, "--dissector", "varint"]).stdout
        #expect(!text.contains("response time"))
    }

    /// A protocol file's `requests` and `responses` pair only those types: a server push between
    /// a request and its answer is no answer. Client: login at 10 ms, chat at 20, bye (no
    /// request) at 30; server: notify at 11, ok at 15, ok at 22, notify at 31.
    @Test func aProtocolFilePairsTheTypesItNames() throws {
        var capture = AdversarialTests.Hostile()
        let client = Endpoint("10.9.0.2:40000")!, server = Endpoint("10.9.0.1:9000")!
        capture.connect(client, server, clientISN: 1000, serverISN: 5000)
        let start = capture.clock
        var sequence = (client: UInt32(1001), server: UInt32(5001))
        for (ms, fromClient, type) in [(10, true, 1), (11, false, 9), (15, false, 3), (20, true, 2), (22, false, 3), (30, true, 7), (31, false, 9)] {
            let frame: [UInt8] = [0, 4, UInt8(type), 0xAA, 0xBB, 0xCC]  // length 4: the type and three body bytes
            capture.clock = start + Int64(ms) * 1_000_000 - 1_000
            if fromClient {
                capture.send(client, server, seq: sequence.client, frame)
                sequence.client += UInt32(frame.count)
            } else {
                capture.send(server, client, seq: sequence.server, frame)
                sequence.server += UInt32(frame.count)
            }
        }
        let path = capture.save()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let spec = "length:offset=0,width=2,type=2:1"
        func milliseconds(_ times: [String: Any], _ type: String) -> Double? {
            ((times["byType"] as? [String: Any])?[type] as? [String: Any])?["max"].flatMap { ($0 as? Double).map { $0 * 1000 } }
        }
        // Every message a request or an answer: login is "answered" by the push.
        let plain = try responseTimes(path, spec)
        #expect(plain["paired"] as? Int == 3)
        #expect(milliseconds(plain, "1").map { abs($0 - 1) < 0.01 } == true)

        for (name, text) in [
            ("pairing.yaml", "spec: \(spec)\ntypes:\n  1: login\n  2: chat\n  3: ok\n  7: bye\n  9: notify\nrequests: login, chat\nresponses: [ok]\n"),
            ("pairing.json", #"{"spec": "\#(spec)", "types": {"1": "login", "2": "chat", "3": "ok"}, "requests": ["login", 2], "responses": "0x03"}"#),
        ] {
            let file = scratchDirectory + "framescope-\(UUID().uuidString)-" + name
            FileManager.default.createFile(atPath: file, contents: Data(text.utf8))
            defer { try? FileManager.default.removeItem(atPath: file) }
            let times = try responseTimes(path, "@" + file)
            #expect(times["paired"] as? Int == 2, "\(name)")
            #expect(times["unanswered"] as? Int == 0 && times["unpaired"] as? Int == 0, "\(name)")
            #expect(milliseconds(times, "login").map { abs($0 - 5) < 0.01 } == true, "\(name): \(times)")
            #expect(milliseconds(times, "chat").map { abs($0 - 2) < 0.01 } == true, "\(name): \(times)")
            #expect((times["byType"] as? [String: Any])?.count == 2, "\(name)")
        }

        // Checked like every key: a name not under types, a SPEC without a type field.
        for (text, message) in [
            ("spec: \(spec)\ntypes:\n  3: ok\nrequests: login\n", "line 4: 'login' in requests is neither a type value nor a name under 'types'"),
            ("spec: length:offset=0,width=2\nresponses: 3\n", "line 2: pairs responses by type, but"),
            ("spec: \(spec)\nrequests: 300\n", "line 2: type 300 in requests cannot occur"),
        ] {
            let file = scratchDirectory + "framescope-\(UUID().uuidString).yaml"
            FileManager.default.createFile(atPath: file, contents: Data(text.utf8))
            defer { try? FileManager.default.removeItem(atPath: file) }
            let result = try cli.run(["analyze", path, "--dissector", "@" + file])
            #expect(result.status == 64 && result.stderr.contains(message), "\(result.stderr)")
        }
    }
}
