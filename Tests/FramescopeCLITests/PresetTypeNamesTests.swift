import Foundation
import Testing

/// Presets name their message types as the protocol does, and the counts by name equal
/// tshark's own dissection of the same captures (its type fields mapped through the same names).
@Suite struct PresetTypeNamesTests {
    let cli = CLITests()

    struct Case: Sendable, CustomStringConvertible {
        var capture: String
        var preset: String
        var field: String
        /// tshark's value of `field` as the preset's type name.
        var names: @Sendable (Int) -> String?
        /// Only the messages from this port, where tshark gives up on the other direction.
        var onlyFrom: String? = nil
        var description: String { capture }
    }

    static let cases: [Case] = [
        Case(capture: "mqtt-big-publish.pcap", preset: "mqtt", field: "mqtt.msgtype") {
            ["", "CONNECT", "CONNACK", "PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP", "SUBSCRIBE", "SUBACK", "UNSUBSCRIBE", "UNSUBACK",
             "PINGREQ", "PINGRESP", "DISCONNECT", "AUTH"][safe: $0]
        },
        // The client's first HEADERS block is 18 KB; tshark 4.0 stops at it ("BoundErrorUnreassembled")
        // and leaves the client's later frames undissected: the server's side only.
        Case(capture: "http2-h2c-null.pcap", preset: "http2", field: "http2.type", names: {
            ["DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS", "PUSH_PROMISE", "PING", "GOAWAY", "WINDOW_UPDATE", "CONTINUATION"][safe: $0]
        }, onlyFrom: "80"),
        Case(capture: "tls-ipv6-null.pcap", preset: "tls", field: "tls.record.content_type") {
            [20: "ChangeCipherSpec", 21: "Alert", 22: "Handshake", 23: "ApplicationData", 24: "Heartbeat"][$0]
        },
    ]

    @Test(arguments: cases)
    func countsByNameAreTsharks(_ c: Case) throws {
        let capture = ExportCLITests.corpus + "/" + c.capture
        guard FileManager.default.fileExists(atPath: capture) else { return oracleMissing("preset type names: no ../shared/corpus") }
        guard let tshark = ExportCLITests.tshark else { return oracleMissing("preset type names: no tshark") }
        let result = try cli.run(["analyze", capture, "--dissector", "preset:" + c.preset, "--format", "json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        var ours: [String: Int] = [:]  // "sourcePort name"
        for connection in try #require(json["connections"] as? [[String: Any]]) {
            let endpoints = [connection["client"] as? String, connection["server"] as? String]
            for (i, d) in try #require(connection["directions"] as? [[String: Any]]).enumerated() {
                let port = try #require(endpoints[i]?.split(separator: ":").last.map(String.init))
                guard c.onlyFrom == nil || c.onlyFrom == port else { continue }
                for (name, n) in d["messageTypes"] as? [String: Int] ?? [:] { ours["\(port) \(name)", default: 0] += n }
            }
        }
        let fields = try cli.run(
            ["-r", capture, "-T", "fields", "-e", "tcp.srcport", "-e", c.field, "-E", "occurrence=a", "-E", "aggregator=,"], executable: tshark)
        var theirs: [String: Int] = [:]
        for line in fields.stdout.split(separator: "\n") {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard f.count == 2, !f[1].isEmpty, c.onlyFrom == nil || c.onlyFrom == String(f[0]) else { continue }
            for value in f[1].split(separator: ",") {
                let name = try #require(Int(value).flatMap(c.names), "\(c.capture): tshark's \(c.field) \(value)")
                theirs["\(f[0]) \(name)", default: 0] += 1
            }
        }
        #expect(!theirs.isEmpty)
        #expect(ours == theirs, "\(c.capture)")
    }

    /// Merged messages by type (a message sharing a segment with another) and the longest
    /// assembly (first to last segment) by type equal what tshark's dissection implies: a PDU
    /// is glued when the frame that completes it completes another, when its first segment
    /// completes another, or when another PDU starts in its last frame.
    @Test(arguments: cases.filter { $0.onlyFrom == nil })
    func mergedAndAssemblyByTypeAreTsharks(_ c: Case) throws {
        let capture = ExportCLITests.corpus + "/" + c.capture
        guard FileManager.default.fileExists(atPath: capture) else { return oracleMissing("types: no ../shared/corpus") }
        guard let tshark = ExportCLITests.tshark else { return oracleMissing("types: no tshark") }
        let report = try cli.run(["analyze", capture, "--dissector", "preset:" + c.preset, "--format", "json"]).stdout
        try cli.expectValidReport(report)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: Any])
        let totals = try #require(json["totals"] as? [String: Any])
        let firstClient = try #require((json["connections"] as? [[String: Any]])?.first?["client"] as? String)
        let clientPort = String(try #require(firstClient.split(separator: ":").last))

        // Every frame's time, and each frame's PDUs: (source port, type name, frames that carried it).
        let times = try cli.run(["-r", capture, "-T", "fields", "-e", "frame.number", "-e", "frame.time_epoch"], executable: tshark).stdout
            .split(separator: "\n").reduce(into: [Int: Double]()) { map, line in
                let f = line.split(separator: "\t")
                map[Int(f[0])!] = Double(f[1])!
            }
        struct PDU { var port: String, name: String, first: Int, last: Int }
        var pdus: [PDU] = [], completedIn: [Int: Int] = [:], startsIn: [Int: Int] = [:]
        let rows = try cli.run(
            ["-r", capture, "-T", "fields", "-e", "frame.number", "-e", "tcp.srcport", "-e", c.field, "-e", "tcp.segment",
             "-E", "occurrence=a", "-E", "aggregator=,"], executable: tshark).stdout
        for line in rows.split(separator: "\n") {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard f.count == 4, !f[2].isEmpty, let frame = Int(f[0]) else { continue }
            let values = f[2].split(separator: ",")
            // Reassembled across frames: only the frame's first PDU can be (these captures hold no other case).
            let segments = f[3].split(separator: ",").compactMap { Int($0) }
            for (i, value) in values.enumerated() {
                let name = try #require(Int(value).flatMap(c.names))
                let first = i == 0 ? segments.first ?? frame : frame
                pdus.append(PDU(port: f[1], name: name, first: first, last: frame))
                completedIn[frame, default: 0] += 1
                startsIn[first, default: 0] += 1
            }
        }
        var glued: [String: Int] = [:], longest: [String: Double] = [:]
        for p in pdus {
            let key = (p.port == clientPort ? "clientToServer " : "serverToClient ") + p.name
            let othersInLast = completedIn[p.last, default: 0] + startsIn[p.last, default: 0] - (p.first == p.last ? 2 : 1)
            if othersInLast > 0 || (p.first != p.last && completedIn[p.first] != nil) { glued[key, default: 0] += 1 }
            longest[key] = max(longest[key] ?? 0, times[p.last]! - times[p.first]!)
        }
        var ours: [String: Int] = [:], oursLongest: [String: Double] = [:]
        for d in ["clientToServer", "serverToClient"] {
            let f = try #require(totals[d] as? [String: Any])
            for (name, n) in f["mergedTypes"] as? [String: Int] ?? [:] { ours[d + " " + name] = n }
            for (name, t) in f["assemblyLatencyByType"] as? [String: [String: Any]] ?? [:] { oursLongest[d + " " + name] = (t["max"] as? NSNumber)?.doubleValue }
        }
        #expect(ours == glued, "\(c.capture)")
        #expect(Set(oursLongest.keys) == Set(longest.keys), "\(c.capture)")
        for (key, seconds) in longest { #expect(abs((oursLongest[key] ?? -1) - seconds) < 2e-6, "\(c.capture) \(key): \(oursLongest[key] ?? -1) against \(seconds)") }
        #expect(longest.values.contains { $0 > 0 }, "\(c.capture): no message spanned segments")
    }

    /// PostgreSQL names the same letter differently each way ('D': Describe from the client,
    /// DataRow from the server).
    @Test func postgresLettersAreNamedPerDirection() throws {
        let capture = ExportCLITests.corpus + "/pgsql-greenhouse.pcap"
        guard FileManager.default.fileExists(atPath: capture) else { return oracleMissing("postgres type names: no ../shared/corpus") }
        let result = try cli.run(["analyze", capture, "--dissector", "preset:postgres"])
        #expect(result.stdout.contains("Query ×63"))
        #expect(result.stdout.contains("ReadyForQuery ×64"))
        #expect(result.stdout.contains("DataRow ×14"))
        // Over all connections, and the partial ones by type, in JSON as in text.
        #expect(result.stdout.contains("all, client → server: Query ×84, PasswordMessage ×2"))
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(cli.run(["analyze", capture, "--dissector", "preset:postgres", "--format", "json"]).stdout.utf8))
                as? [String: Any])
        let totals = try #require(json["totals"] as? [String: Any])
        for key in ["clientToServer", "serverToClient"] {
            let f = try #require(totals[key] as? [String: Any])
            let types = try #require(f["messageTypes"] as? [String: Int])
            let partial = f["partialTypes"] as? [String: Int] ?? [:]
            // Every typed message counted once (each connection's untyped SSLRequest and
            // StartupMessage aside), every partial one by its type.
            #expect(types.values.reduce(0, +) == (f["messages"] as! Int) - (key == "clientToServer" ? 4 : 0), "\(key)")
            #expect(partial.values.reduce(0, +) <= f["partialMessages"] as! Int)
            #expect(Set(partial.keys).isSubset(of: Set(types.keys)))
        }
        // Merged by type: no message here spans segments, so a glued one is one of several
        // PDUs tshark finds in a frame.
        guard let tshark = ExportCLITests.tshark else { return oracleMissing("postgres merged types: no tshark") }
        let names = [
            "Ready for query": "ReadyForQuery", "Command completion": "CommandComplete", "Row description": "RowDescription", "Data row": "DataRow",
            "Parameter status": "ParameterStatus", "Authentication request": "Authentication", "Backend key data": "BackendKeyData",
            "Simple query": "Query", "Password message": "PasswordMessage",
        ]
        var theirs: [String: Int] = [:]
        for line in try cli.run(["-r", capture, "-Y", "pgsql", "-T", "fields", "-e", "tcp.srcport", "-e", "pgsql.type", "-E", "aggregator=|"], executable: tshark)
            .stdout.split(separator: "\n")
        {
            let f = line.split(separator: "\t"), types = f[1].split(separator: "|")
            guard types.count >= 2 else { continue }
            for type in types { theirs[(f[0] == "5432" ? "serverToClient " : "clientToServer ") + (names[String(type)] ?? String(type)), default: 0] += 1 }
        }
        var ours: [String: Int] = [:]
        for key in ["clientToServer", "serverToClient"] {
            for (name, n) in (totals[key] as? [String: Any])?["mergedTypes"] as? [String: Int] ?? [:] { ours[key + " " + name] = n }
        }
        #expect(!theirs.isEmpty && ours == theirs)
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
