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
}
