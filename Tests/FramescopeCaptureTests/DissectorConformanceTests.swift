import FramescopeCapture
@testable import FramescopeCore
import FramescopeSynthetic
import Foundation
import Testing

/// Presets and explicit SPECs against the corpus truth: per direction, the framing walk's PDU
/// count, partial (PDUs spanning segments), merged (segments touching several PDUs) and
/// trailing incomplete bytes; where the walk stopped, the first malformed header must be at the
/// same offset with the same number of messages before it. The walk is the truth where tshark's
/// own count is wrong (corpus README: openflow13-lossy, rdp-tpkt-fastpath), up to a header it
/// frames without the SPEC's magic (`magicStop`).
@Suite struct DissectorConformanceTests {
    static let specs: [String: String] = [
        "dns-tcp-multirequest": "preset:dns", "dns-tcp-tkey": "preset:dns",
        "tls13-sll2": "preset:tls", "tls-mtu300": "preset:tls", "tls-many-flows-lossy": "preset:tls",
        "tls-overlap-zero-window": "preset:tls", "tls-rawip": "preset:tls", "tls-ipv6-null": "preset:tls",
        "bgp-4byte-asn": "preset:bgp", "bgp-ppp": "preset:bgp", "modbus": "preset:modbus", "mysql-query-attrs": "preset:mysql",
        "pgsql-greenhouse": "preset:postgres", "pgsql-5000-rows": "preset:postgres", "kafka": "preset:kafka",
        "mqtt-big-publish": "preset:mqtt", "s7comm-tpkt": "preset:tpkt", "rdp-tpkt-fastpath": "preset:tpkt",
        // Explicit SPECs for protocols without a required preset.
        "http2-h2c-null": "length:offset=0,width=3,adjust=6,preamble=505249202a20485454502f322e300d0a0d0a534d0d0a0d0a",
        "smb2-nbss": "length:offset=1,width=3", "smb-nbss-bigendian": "length:offset=1,width=3",
        "iec104": "length:offset=1,width=1,magic=68,min=6", "pptp-bigendian": "length:offset=0,width=2,adjust=-2,magic=1a2b3c4d@4,min=16",
        "openflow10": "length:offset=2,width=2,adjust=-4,min=8", "openflow13-lossy": "length:offset=2,width=2,adjust=-4,min=8",
        "opcua-null": "length:offset=4,width=4,endian=little,adjust=-8,min=8", "hislip-u64": "length:offset=8,width=8,magic=4853",
        "enip": "length:offset=2,width=2,endian=little,adjust=20", "amqp-frame-end": "length:offset=3,width=4,adjust=1",
        "git-pktline": "length:offset=0,width=4,encoding=hex,adjust=-4,headeronly=3", "ldap-gap": "length:offset=2,width=4,magic=3084",
        "redis-sll": "delimiter", "smtp": "delimiter:\\r\\n", "ftp-ipv6": "delimiter", "pop3": "delimiter",
        "imap-one-sided": "delimiter", "http-pipelined": "delimiter", "http-vlan": "delimiter:0x0d0a", "http-nanosecond": "delimiter",
    ]

    /// Captures whose framing the grammar cannot express, with the reason.
    static let inexpressible: [String: String] = [
        "dnp3-retrans": "DNP3 link frames carry a CRC every 16 bytes: the length is not linear (corpus README, surprise 6)"
    ]

    struct Truth: Decodable {
        struct Stream: Decodable { var stream: Int; var directions: [String: Direction] }
        struct Direction: Decodable {
            var src: String
            var dst: String
            var gaps: [Gap]?
            var walk: Walk?
            var tshark_pdus: Int?
        }
        struct Gap: Decodable { var at_offset: Int64 }
        struct Walk: Decodable {
            var pdus: Int
            var pdu_lengths: [Int]
            var preamble: [Preamble]?
            var trailing_incomplete_bytes: Int
            var stopped: Stop?
            var pdus_spanning_segments: Int
            var segments_touching_multiple_pdus: Int
        }
        struct Stop: Decodable { var offset: Int64; var reason: String }
        struct Preamble: Decodable { var length: Int }
        var name: String
        var file: String
        var streams: [Stream]
    }

    @Test func everyCorpusCaptureHasASpecOrAReason() throws {
        guard let corpus = corpusDirectory else {
            oracleMissing("dissector conformance: ../shared/corpus not found beside the checkout")
            return
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: corpus.appendingPathComponent("truth").path)
            .map { String($0.dropLast(5)) }
        for name in names { #expect(Self.specs[name] != nil || Self.inexpressible[name] != nil, "\(name) has no SPEC") }
    }

    /// Per direction (by "src>dst"): the analysis and the connection and direction it belongs to.
    static func framing(_ name: String, _ truth: Truth, corpus: URL, midStream: MidStreamFraming)
        throws -> (byEndpoints: [String: (DirectionAnalysis, ConnectionID, FramescopeCore.Direction)], events: [AnalysisEvent], starts: Box)
    {
        let spec = try DissectorSpec(parsing: Self.specs[name]!)
        var analyzer = Analyzer(choice: DissectorChoice(byDefault: spec), midStream: midStream)
        let starts = Box()
        analyzer.onMessage = { starts.add($0) }
        let (table, _) = try analyze([corpus.appendingPathComponent(truth.file).path], sink: analyzer)
        var byEndpoints: [String: (DirectionAnalysis, ConnectionID, FramescopeCore.Direction)] = [:]
        for c in table.sink.connections {
            for d in FramescopeCore.Direction.allCases {
                let (from, to) = d == .clientToServer ? (c.summary.info.client, c.summary.info.server) : (c.summary.info.server, c.summary.info.client)
                if let a = c.directions?[d] { byEndpoints["\(from)>\(to)"] = (a, c.summary.info.id, d) }
            }
        }
        return (byEndpoints, table.sink.context.evidence.events, starts)
    }

    /// Framed from each direction's first byte (`--mid-stream start`, which the walk assumes),
    /// the figures are the walk's.
    @Test(arguments: specs.keys.sorted())
    func framingAgreesWithTheWalk(name: String) throws {
        guard let corpus = corpusDirectory else { return oracleMissing("framing of \(name) against the walk: no ../shared/corpus") }
        let truth = try JSONDecoder().decode(Truth.self, from: Data(contentsOf: corpus.appendingPathComponent("truth/\(name).json")))
        let (byEndpoints, events, starts) = try Self.framing(name, truth, corpus: corpus, midStream: .start)
        let streams = try Self.streamBytes(name, truth, corpus: corpus)
        var checked = 0
        for stream in truth.streams {
            for (_, direction) in stream.directions {
                guard let walk = direction.walk, (direction.gaps ?? []).isEmpty else { continue }
                let key = "\(direction.src)>\(direction.dst)"
                let (ours, id, d) = try #require(byEndpoints[key], "\(name): \(key) missing")
                let place = "\(name) stream \(stream.stream) \(key)"
                checked += 1
                if let stop = Self.magicStop(walk, bytes: streams[id.rawValue]?[d.rawValue] ?? [], spec: name) {
                    // The walk frames lengths only; where a header it frames lacks the SPEC's magic,
                    // framescope must call that header malformed, after the same messages.
                    let firstMalformed = events.first { $0.connection == id && $0.direction == d && $0.kind == .malformed }
                    #expect(firstMalformed?.offset == stop.offset, "\(place): the magic stops the walk at \(stop.offset)")
                    #expect(starts.count(id, d, before: stop.offset) == stop.pdus, "\(place): messages before the bad magic")
                    if stop.offset == 0 && direction.tshark_pdus == 0 { #expect(ours.messages == 0, "\(place): messages where tshark found none") }
                    continue
                }
                if let stop = walk.stopped {
                    let firstMalformed = events.first { $0.connection == id && $0.direction == d && $0.kind == .malformed }
                    #expect(firstMalformed?.offset == stop.offset, "\(place): walk stopped at \(stop.offset) (\(stop.reason))")
                    #expect(starts.count(id, d, before: stop.offset) == walk.pdus, "\(place): messages before the stop")
                    continue
                }
                #expect(ours.messages == walk.pdus, "\(place): messages")
                #expect(ours.partialMessages == walk.pdus_spanning_segments, "\(place): partial")
                #expect(ours.mergedSegments == walk.segments_touching_multiple_pdus, "\(place): merged")
                #expect((ours.incompleteAtEnd > 0) == (walk.trailing_incomplete_bytes > 0), "\(place): incomplete at end")
                #expect(ours.malformed == 0, "\(place): malformed")
            }
        }
        #expect(checked > 0)
    }

    /// Where the walk frames a header without the SPEC's magic: its offset and the PDUs before it
    /// (nil: every header the walk frames, the trailing incomplete one included, has it, or the
    /// SPEC has none). The walk frames by lengths only, so where a direction is not the protocol
    /// it frames what is not there (corpus README: plain HTTP on port 80 in tls-many-flows-lossy;
    /// the zeros every direction of tls-overlap-zero-window starts with, where tshark's record
    /// count is the right one; modbus stream 5's last 17 bytes, whose protocol identifier is not 0).
    static func magicStop(_ walk: Truth.Walk, bytes: [UInt8], spec name: String) -> (offset: Int64, pdus: Int)? {
        guard case .lengthField(let d)? = (try? DissectorSpec(parsing: specs[name]!))?.kind, !d.magic.isEmpty else { return nil }
        var offset = (walk.preamble ?? []).reduce(0) { $0 + $1.length }
        func lacksMagic(at start: Int) -> Bool {
            let at = start + d.magicOffset
            return at + d.magic.count <= bytes.count && Array(bytes[at..<at + d.magic.count]) != d.magic.array
        }
        for (k, length) in walk.pdu_lengths.enumerated() {
            if lacksMagic(at: offset) { return (Int64(offset), k) }
            offset += length
        }
        return walk.trailing_incomplete_bytes > 0 && lacksMagic(at: offset) ? (Int64(offset), walk.pdu_lengths.count) : nil
    }

    /// Every direction's reassembled bytes (what ConformanceTests holds to tshark's), by connection
    /// ID, then direction: the bytes' runs joined, as the directions checked have no gaps.
    static func streamBytes(_ name: String, _ truth: Truth, corpus: URL) throws -> [Int: [[UInt8]]] {
        let (table, _) = try analyze([corpus.appendingPathComponent(truth.file).path], sink: StreamRecorder())
        var streams: [Int: [[UInt8]]] = [:]
        for (key, stream) in table.sink.streams {
            streams[key.connection, default: [[], []]][key.direction.rawValue] = stream.runs.reduce(into: []) { bytes, run in
                if case .bytes(let b) = run { bytes += b }
            }
        }
        return streams
    }

    /// Searching for the first boundary (the default), a direction picked up mid-stream either
    /// frames exactly as the walk or, with too little evidence, not at all: never differently.
    @Test(arguments: specs.keys.sorted())
    func searchingFramesAsTheWalkOrNotAtAll(name: String) throws {
        guard let corpus = corpusDirectory else { return oracleMissing("mid-stream search on \(name): no ../shared/corpus") }
        let truth = try JSONDecoder().decode(Truth.self, from: Data(contentsOf: corpus.appendingPathComponent("truth/\(name).json")))
        let (byEndpoints, _, _) = try Self.framing(name, truth, corpus: corpus, midStream: .search)
        let streams = try Self.streamBytes(name, truth, corpus: corpus)
        var same = 0, notFound = 0
        for stream in truth.streams {
            for (_, direction) in stream.directions {
                guard let walk = direction.walk, walk.stopped == nil, (direction.gaps ?? []).isEmpty else { continue }
                let key = "\(direction.src)>\(direction.dst)"
                let (ours, id, d) = try #require(byEndpoints[key], "\(name): \(key) missing")
                // Where the magic stops the walk, no walk to agree with (see `magicStop`).
                if Self.magicStop(walk, bytes: streams[id.rawValue]?[d.rawValue] ?? [], spec: name) != nil {
                    if direction.tshark_pdus == 0 { #expect(ours.messages == 0, "\(name) \(key): messages where tshark found none") }
                    continue
                }
                if ours.messages == 0 && ours.incompleteAtEnd == 0 && ours.leadingBytes > 0 && ours.boundariesNotFound > 0 {
                    notFound += 1
                    continue
                }
                same += 1
                let place = "\(name) stream \(stream.stream) \(key)"
                #expect(ours.messages == walk.pdus && ours.malformed == 0, "\(place): \(ours.messages) messages, walk \(walk.pdus)")
                #expect(ours.leadingBytes == 0, "\(place): \(ours.leadingBytes) leading bytes where the walk starts at 0")
            }
        }
        print("mid-stream search, \(name): \(same) directions framed as the walk, \(notFound) without a boundary found")
    }
}

/// Message start offsets per direction, filled from the analyzer's message callback.
final class Box: @unchecked Sendable {
    private var starts: [String: [Int64]] = [:]
    func add(_ m: MessageRecord) { starts["\(m.connection)/\(m.direction)", default: []].append(m.offset) }
    func count(_ id: ConnectionID, _ d: FramescopeCore.Direction, before offset: Int64) -> Int {
        (starts["\(id)/\(d)"] ?? []).filter { $0 < offset }.count
    }
}
