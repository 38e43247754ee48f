import FramescopeCore

/// The `analyze --format json` document, schema `framescope.report/4` (docs/json-schemas.md).
public struct AnalysisReport: Sendable {
    public var schema = "framescope.report/4"
    public var inputs: [FlowsReport.Input]
    public var packets: FlowsReport.Packets
    public var limits: FlowsReport.Limits
    public var dissectors: Dissectors
    public var totals: Totals
    /// The connections the human formats list (the worst first, with a listing), converted one
    /// at a time when written.
    public let analyses: [ConnectionAnalysis]
    /// Every finished connection as the JSON lists it, when a listing kept them.
    let listing: ConnectionListing?
    public var connections: LazyMapSequence<[ConnectionAnalysis], Connection> {
        let check = protobufCheck
        return analyses.lazy.map { Connection($0, protobuf: check) }
    }
    /// Every connection of reports merged from shards, as they listed them.
    var mergedConnections: MergedConnections?
    /// What bodies were checked as; nil when they were not.
    public var protobuf: Protobuf?
    let protobufCheck: ProtobufCheck?
    /// Evidence, in stream order per connection (the first 10,000).
    public var events: [Event]
    public var eventsTotal: Int
    /// A few partial messages and merged segments per direction, in the order they were found.
    public var examples: [Example] = []
    public var warnings: [String]
    /// The first packet and the last of the connections analyzed.
    public var span: (first: Timestamp, last: Timestamp)?
    /// Round trips, retransmissions, duplicate ACKs and zero windows over every connection.
    public var tcp: TCPContext?
    /// Response times by request type; nil when no connection was dissected.
    public var responseTimes: ResponseTimesReport?
    /// SPECs next to the given one that frame a direction it found malformed headers in
    /// cleanly (files only: a second pass samples those directions).
    public var specSuggestions: [SpecSuggestion] = []
    /// `--dissector auto`: what inference said of each server port.
    public var inference: [FramingInference.PortInference] = []
    /// Live captures only: the interface and what the kernel dropped.
    public var capture: Capture?
    /// The histograms and counts behind the figures, for `merge`.
    public var sketches: Sketches?

    public struct Capture: Sendable {
        public var interface: String
        public var filter: String?
        /// Packets framescope read from the capture.
        public var packetsCaptured: Int
        /// What libpcap's `pcap_stats` says the kernel received (on Linux loopback each
        /// packet is seen twice, once outgoing, which libpcap discards).
        public var packetsReceived: Int
        public var kernelDrops: Int
        public var interfaceDrops: Int
        /// Captured (and saved) but not analysed: the analysis fell a whole queue behind, and
        /// the rest of the connections that lost a packet so (`shedConnections`) was let go.
        public var analysisDrops: Int
        public var shedConnections: Int
        public var durationSeconds: Double
        /// `--write` as given, and the files it became (one, or the rotated ones in order).
        public var savedTo: String?
        public var files: [String]

        /// Every packet lost to the analysis, wherever it was dropped.
        public var drops: Int { kernelDrops + interfaceDrops + analysisDrops }

        public init(
            interface: String, filter: String?, packetsCaptured: Int, packetsReceived: Int, kernelDrops: Int, interfaceDrops: Int,
            analysisDrops: Int = 0, shedConnections: Int = 0, durationSeconds: Double, savedTo: String?, files: [String] = []
        ) {
            self.interface = interface
            self.filter = filter
            self.packetsCaptured = packetsCaptured
            self.packetsReceived = packetsReceived
            self.kernelDrops = kernelDrops
            self.interfaceDrops = interfaceDrops
            self.analysisDrops = analysisDrops
            self.shedConnections = shedConnections
            self.durationSeconds = durationSeconds
            self.savedTo = savedTo
            self.files = files
        }
    }

    public struct Protobuf: Sendable, Equatable {
        /// `wire` (well-formed protobuf wire data) or `schema` (parses as `message`).
        public var mode: String
        public var message: String?
        public var countBy: String?
        /// `varint` (only varint-delimited connections) or `length-framed` (all length-field ones).
        public var scope: String
    }

    /// Bodies checked as protobuf in a direction (or summed).
    public struct ProtobufFigures: Sendable {
        public var checked: Int
        public var invalid: Int
        public var invalidPercent: Double
        public var invalidByReason: [String: Int]
        /// Valid bodies by the count field's value (enum names where the schema has them).
        public var counts: [String: Int]?
    }

    public struct Dissectors: Sendable {
        /// The SPEC every connection without a per-port one uses (reusable on the command line).
        public var `default`: String?
        /// Its preset or protocol-file name, or the SPEC again.
        public var defaultName: String?
        public var byServerPort: [String: String]
    }

    public struct Totals: Sendable {
        public var connections: Int
        public var dissectedConnections: Int
        /// Connections counted in the totals but not listed in the JSON report (`--connections`).
        public var foldedConnections: Int
        /// Payload bytes of the connections no dissector applied to (not in the JSON: the
        /// `undissected` gate adds them).
        public var undissectedConnectionBytes: Int64
        public var clientToServer: Figures
        public var serverToClient: Figures
        public var all: Figures
    }

    public struct Connection: Sendable {
        public var id: Int
        public var client: String
        public var server: String
        /// The SPEC (or preset/protocol name) used; null when no dissector applied.
        public var dissector: String?
        public var start: String
        public var end: String
        /// Epoch seconds of the connection's first and last packet.
        public var firstTime: String
        public var lastTime: String
        public var directions: [DirectionReport]
    }

    public struct DirectionReport: Sendable {
        public var from: String
        public var to: String
        public var bytes: Int64
        public var gapBytes: Int64
        public var figures: Figures
        public var messageTypes: [String: Int]?
        /// Partial and merged messages by type name, when any.
        public var partialTypes: [String: Int]? = nil
        public var mergedTypes: [String: Int]? = nil
        /// Partial, merged and malformed over time; nil when the direction had none.
        public var timeline: Timeline?
    }

    public struct Timeline: Sendable {
        /// Epoch seconds where the first bucket starts (the first event).
        public var origin: String
        public var bucketSeconds: Double
        public var partial: [Int]
        public var merged: [Int]
        public var malformed: [Int]
    }

    /// Everything measured for a direction, or summed over several.
    public struct Figures: Sendable {
        public var segments: Int
        public var messages: Int
        public var messageBytes: Int64
        public var messageSize: Distribution
        /// `[lower, messages]` pairs: messages of `lower` to `2 × lower - 1` bytes.
        public var messageSizeBins: [[Int64]]
        public var partialMessages: Int
        public var partialPercent: Double
        /// Partial messages and merged segments by cause (`SplitCause`: offload, mss, window,
        /// retransmission, nagle, writes), only the causes that counted.
        public var partialCauses: [String: Int]
        public var mergedCauses: [String: Int]
        /// `[segments, messages]` pairs; the last bucket (63) stands for 63 and more.
        public var segmentsPerMessage: [[Int]]
        public var maxSegmentsPerMessage: Int
        public var mergedSegments: Int
        public var mergedPercent: Double
        /// `[messages, segments]` pairs.
        public var messagesPerSegment: [[Int]]
        public var maxMessagesPerSegment: Int
        public var naiveReaderLoss: Int
        public var naiveReaderLossPercent: Double
        public var malformed: Int
        public var malformedByReason: [String: Int]
        public var incompleteAtEnd: Int
        public var incompleteBytes: Int64
        public var damagedByGaps: Int
        public var undissectedBytes: Int64
        /// Bytes before the first boundary of a direction picked up mid-stream.
        public var leadingBytes: Int64
        /// The weakest evidence (bits, one decimal) for a boundary recovery found; nil: none found.
        public var boundaryEvidenceBits: Double?
        /// Searches that ended without a boundary clearing the bar.
        public var boundariesNotFound: Int
        public var preambleBytes: Int64
        public var resyncs: Int
        public var stopped: Bool
        /// Seconds from a message's first to its last segment.
        public var assemblyLatency: Distribution
        /// `[lower, messages]` pairs: messages assembled in `lower` to `2 × lower - 1` µs (0: in
        /// one segment or within the capture's resolution).
        public var assemblyLatencyBins: [[Int64]]
        public var segmentsOverMSS: Int
        /// Only when bodies were checked as protobuf.
        public var protobuf: ProtobufFigures?
        /// Totals only, when one SPEC with a type field framed every dissected connection:
        /// messages, partial messages and merged ones (sharing a segment with another) by type
        /// name, and their assembly latency by type name.
        public var messageTypes: [String: Int]? = nil
        public var partialTypes: [String: Int]? = nil
        public var mergedTypes: [String: Int]? = nil
        public var assemblyLatencyByType: [String: TypeLatency]? = nil
        /// Totals only, with `--mss`: the split and merge figures of the segments as captured.
        public var asCaptured: AsCaptured? = nil
    }

    public struct Distribution: Sendable {
        public var min: Double
        public var p50: Double
        public var p99: Double
        public var max: Double
    }

    /// With `--mss`, the figures of the segments as the capture point saw them (the report's own
    /// are the re-cut ones, as the wire carried them).
    public struct AsCaptured: Sendable {
        public var segments: Int
        public var partialMessages: Int
        public var partialPercent: Double
        public var mergedSegments: Int
        public var mergedPercent: Double
        public var naiveReaderLoss: Int
        public var naiveReaderLossPercent: Double
        public var partialCauses: [String: Int]
        public var mergedCauses: [String: Int]
    }

    /// The assembly latency of one message type: how many were timed, and the distribution.
    public struct TypeLatency: Sendable {
        public var messages: Int
        public var latency: Distribution
    }

    /// "with adjust=-8 the stream frames cleanly (1,240 messages, 0 malformed)", for one direction.
    public struct SpecSuggestion: Sendable {
        public var connection: Int
        public var from: String
        public var to: String
        /// The options that changed (`adjust=-8`), and the whole SPEC with them.
        public var change: String
        public var spec: String
        /// What the change means, when it has a name ("the length counts the header").
        public var meaning: String?
        /// What it frames, without a malformed header: the whole stream, or its first `bytes`.
        public var messages: Int
        public var bytes: Int
        public var wholeStream: Bool

        public init(connection: Int, from: String, to: String, _ s: SpecVariations.Suggestion, wholeStream: Bool) {
            self.connection = connection
            self.from = from
            self.to = to
            change = s.change
            spec = s.spec
            meaning = s.meaning
            messages = s.messages
            bytes = s.bytes
            self.wholeStream = wholeStream
        }

        /// "#3 10.0.0.1:5000 → 10.0.0.2:80: 1240 messages in the whole stream"
        var direction: String {
            "#\(connection) \(from) → \(to): \(counted(messages, "message")) in \(wholeStream ? "the whole stream" : "its first \(counted(bytes, "byte"))")"
        }
    }

    /// One line per server port `--dissector auto` inferred a framing for (or did not).
    public var inferenceSentences: [String] { inference.map(InferenceTextFormatter.line) }

    /// One sentence per suggested SPEC, with the directions it frames cleanly: "with adjust=-8
    /// (the length counts the header), 0 malformed: #3 … (1240 messages in the whole stream);
    /// --dissector 'length:…'".
    public var suggestionSentences: [String] {
        var order: [String] = [], directions: [String: [SpecSuggestion]] = [:]
        for s in specSuggestions {
            if directions[s.spec] == nil { order.append(s.spec) }
            directions[s.spec, default: []].append(s)
        }
        return order.map { spec in
            let list = directions[spec]!, first = list[0]
            return "with \(first.change)\(first.meaning.map { " (\($0))" } ?? "") framing is clean, 0 malformed: "
                + list.map(\.direction).joined(separator: "; ") + "; --dissector '\(spec)'"
        }
    }

    /// A partial message or a merged segment, with what finds it in Wireshark.
    public struct Example: Sendable {
        /// `partial` or `merged`.
        public var kind: String
        public var connection: Int
        public var from: String
        public var to: String
        /// Partial: the message's first byte; merged: the segment's.
        public var offset: Int64
        /// Partial: the message's length; merged: 0.
        public var length: Int64
        public var firstFrame: UInt64
        public var lastFrame: UInt64
        /// Partial: segments the message spans; merged: messages the segment carries.
        public var count: Int
        /// Why (`SplitCause`).
        public var cause: String
        public var time: String
        public var wiresharkFilter: String
    }

    public struct Event: Sendable {
        public var kind: String
        public var reason: String?
        public var connection: Int
        public var from: String
        public var to: String
        public var offset: Int64
        public var frame: UInt64
        /// When the frame was captured (`time`: as the JSON has it).
        public var timestamp: Timestamp
        public var time: String { timestamp.epochString }
        /// Up to 16 bytes at `offset` (the JSON has them in hex).
        public var bytes: [UInt8]
        public var length: Int64
        /// The Wireshark display filter naming the connection (`tcp.stream == N`, or by its
        /// addresses and ports), shared by its events; an event's own filter is written from it
        /// (made for each of 10,000 events, the filters and times were two thirds of building them).
        public var connectionFilter: String
        /// A Wireshark display filter showing the frame.
        public var wiresharkFilter: String { "\(connectionFilter) && frame.number == \(frame)" }
        /// `invalid-protobuf` only: the stream offset of the byte the body stopped parsing at, and its frame.
        public var failedAt: Int64?
        public var failedInFrame: UInt64?
        /// `malformed` and `resynchronized`: the evidence (bits, one decimal) for where framing
        /// resumed; nil when it did not.
        public var evidenceBits: Double?
        /// `malformed`: what the bytes look like, when something is recognised.
        public var looksLike: String?
    }
}
