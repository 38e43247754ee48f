import Foundation
import Testing

/// Real OpenLDAP traffic (scripts/record-ldap.sh: slapd and ldap-utils in a network namespace),
/// captured twice at once: from before the first connection, and by a tcpdump started late, in
/// the middle of a long-lived ldapadd session and of a bulk search answer. The truth comes from
/// tshark (scripts/ldap-truth.py): its LDAP PDU count per direction of the full capture, and
/// where the late capture's segments fall in those streams.
@Suite struct LDAPRecordingTests {
    static let directory = CLITests.root.appendingPathComponent("Tests/FramescopeCLITests/Fixtures/ldap").path

    static func truth(_ capture: String) throws -> [String: [String: Int]] {
        let url = URL(fileURLWithPath: "\(directory)/ldap.truth.json")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
        return json[capture] as! [String: [String: Int]]
    }

    func totals(_ capture: String) throws -> [String: [String: Any]] {
        let result = try CLITests().run(["analyze", "\(Self.directory)/ldap-\(capture).pcap", "--dissector", "preset:ldap", "--format", "json", "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        let totals = report["totals"] as! [String: Any]
        return totals.compactMapValues { $0 as? [String: Any] }
    }

    /// Per direction: messages, the tail before the first boundary, partial and merged, exactly as
    /// tshark's streams give them; no byte is malformed or left undissected.
    @Test(arguments: ["full", "late"]) func figuresAreTsharks(capture: String) throws {
        let truth = try Self.truth(capture)
        let totals = try totals(capture)
        for direction in ["clientToServer", "serverToClient"] {
            let want = truth[direction]!, got = totals[direction]!
            func figure(_ key: String) -> Int { got[key] as! Int }
            #expect(figure("messages") == want["messages"], "\(capture) \(direction) messages")
            #expect(figure("leadingBytes") == want["leadingBytes"], "\(capture) \(direction) leading bytes")
            #expect(figure("partialMessages") == want["partial"], "\(capture) \(direction) partial")
            #expect(figure("mergedSegments") == want["merged"], "\(capture) \(direction) merged")
            #expect(figure("incompleteAtEnd") == want["incomplete"], "\(capture) \(direction) incomplete")
            #expect(figure("malformed") == 0 && figure("undissectedBytes") == 0 && figure("boundariesNotFound") == 0, "\(capture) \(direction)")
        }
    }

    /// The late capture starts inside a search answer: a tail, then boundaries found with evidence.
    @Test func lateCaptureStartsInsideAMessage() throws {
        let truth = try Self.truth("late")
        #expect(truth["serverToClient"]!["leadingBytes"]! > 0)
        let totals = try totals("late")
        #expect((totals["all"]!["boundaryEvidenceBits"] as? Double ?? 0) >= 16)
    }
}
