import FramescopeCore

/// The `flows --format json` document, schema `framescope.flows/1` (docs/json-schemas.md).
/// Field names are stable; new fields may be added, none renamed or removed within /1.
public struct FlowsReport: Sendable {
    public var schema = "framescope.flows/1"
    public var inputs: [Input]
    public var packets: Packets
    public var limits: Limits
    public var connections: [Connection]
    /// The TCP analysis's totals (the analyze report shows them; `flows` lists retransmissions).
    public var tcp: AnalysisReport.TCPContext?

    public struct Input: Sendable {
        public var path: String
        public var packets: Int
        public var firstFrame: UInt64
        public var reader: String
        public var error: String?
        /// The IANA time zone the file names (pcapng `if_iana_tzname`), if it names one.
        public var timeZone: String?
        /// The frame index whose original frame numbers the file's records carry (`split`).
        public var frameIndex: String?

        public init(
            path: String, packets: Int, firstFrame: UInt64, reader: String, error: String?, timeZone: String? = nil, frameIndex: String? = nil
        ) {
            self.path = path
            self.packets = packets
            self.firstFrame = firstFrame
            self.reader = reader
            self.error = error
            self.timeZone = timeZone
            self.frameIndex = frameIndex
        }
    }

    public struct Packets: Sendable {
        public var total: Int
        public var tcp: Int
        /// TCP segments whose payload the snaplen cut, and the payload bytes cut.
        public var cutBySnaplen: Int
        public var bytesCutBySnaplen: Int64
        /// Packets not handed to the flow table, by reason (`not-tcp`, `ip-fragment`, …).
        public var skipped: [String: Int]
    }

    public struct Limits: Sendable {
        public var peakBufferedBytes: Int
        public var bufferLimitGaps: Int
        /// Bytes that arrived for holes already skipped by a buffer limit (not delivered).
        public var lateBytes: Int64
        public var globalLimitEvictions: Int
        public var connectionLimitEvictions: Int
        /// Closed connections finalized before `--closed-timeout` (`--max-closed-connections`).
        public var closedLimitFinalized: Int
        public var directionsWithoutConflictCheck: Int
    }

    public struct Connection: Sendable {
        public var id: Int
        public var client: String
        public var server: String
        /// How client and server were told apart: `syn`, `syn-ack` or `port-heuristic`.
        public var roles: String
        /// `syn` when the handshake was captured, else `mid-stream`.
        public var start: String
        /// `fin` (both ways), `half-closed`, `rst` or `open`.
        public var end: String
        public var finalizedBy: String
        public var firstFrame: UInt64
        /// Epoch seconds with nine decimals, as tshark's `frame.time_epoch`.
        public var firstTime: String
        /// The same instant, for the human formats (ISO 8601).
        public var firstSeen: Timestamp
        public var lastTime: String
        public var durationSeconds: Double
        public var packets: Int
        /// Client → server first, then server → client.
        public var directions: [DirectionReport]
    }

    public struct DirectionReport: Sendable {
        public var from: String
        public var to: String
        public var packets: Int
        public var payloadPackets: Int
        public var wireBytes: Int64
        /// Reassembled bytes (captured bytes only, each once).
        public var bytes: Int64
        public var segments: Int
        public var retransmissions: Int
        public var outOfOrder: Int
        public var keepAlives: Int
        /// Bytes that arrived after their hole was skipped by a buffer limit.
        public var lateBytes: Int64
        public var syn: Bool
        public var fin: Bool
        public var rst: Bool
        public var midStream: Bool
        public var mss: Int?
        public var gaps: Gaps
        public var conflicts: Conflicts
    }

    public struct Gaps: Sendable {
        public var count: Int
        public var bytes: Int64
        /// The first 32 gaps.
        public var list: [Gap]
    }

    public struct Gap: Sendable, Equatable {
        /// Sequence-space offset from the direction's first byte.
        public var offset: Int64
        /// Offset in the extracted (gap-free) stream where the hole sits.
        public var capturedOffset: Int64
        public var length: Int64
        public var reason: String
    }

    public struct Conflicts: Sendable {
        public var count: Int
        public var bytes: Int64
        /// The first 32 conflicts.
        public var list: [Conflict]
        /// Overlapping copies too old to compare (outside the conflict window).
        public var uncheckedBytes: Int64
    }

    public struct Conflict: Sendable {
        public var offset: Int64
        public var length: Int64
        public var frame: UInt64
    }
}

extension FlowsReport {
    public init(collector: FlowsCollector, decode: DecodeStatistics, context: ReassemblyContext, inputs: [Input]) {
        self.inputs = inputs
        var skipped: [String: Int] = [:]
        for reason in SkipReason.allCases where decode[reason] > 0 { skipped[reason.description] = decode[reason] }
        packets = Packets(
            total: decode.packets, tcp: decode.tcpSegments, cutBySnaplen: decode.cutSegments, bytesCutBySnaplen: decode.cutBytes, skipped: skipped)
        let summaries = collector.sortedConnections
        limits = Limits(
            peakBufferedBytes: context.peakBufferedBytes,
            bufferLimitGaps: context.bufferLimitGaps,
            lateBytes: context.lateBytes,
            globalLimitEvictions: context.globalLimitEvictions,
            connectionLimitEvictions: context.connectionLimitEvictions,
            closedLimitFinalized: context.closedLimitFinalized,
            directionsWithoutConflictCheck: context.directionsWithoutConflictCheck)
        connections = summaries.map { Connection($0, details: collector.finishedDetails[$0.info.id]) }
        tcp = AnalysisReport.TCPContext(context)
    }
}

extension FlowsReport.Connection {
    init(_ summary: ConnectionSummary, details: FlowsCollector.Details?) {
        let info = summary.info
        id = info.id.rawValue
        client = info.client.description
        server = info.server.description
        roles = info.roleEvidence.rawValue
        start = summary.synSeen ? "syn" : "mid-stream"
        end = summary.end.rawValue
        finalizedBy = summary.finalizedBy.rawValue
        firstFrame = info.firstFrame
        firstTime = info.firstSeen.epochString
        firstSeen = info.firstSeen
        lastTime = summary.lastSeen.epochString
        durationSeconds = Double(summary.lastSeen.nanoseconds - info.firstSeen.nanoseconds) / 1e9
        packets = summary.packets
        directions = Direction.allCases.map { direction in
            let s = summary[direction]
            let (from, to) = direction == .clientToServer ? (info.client, info.server) : (info.server, info.client)
            let gaps = details?.gaps[direction.rawValue] ?? []
            let conflicts = details?.conflicts[direction.rawValue] ?? []
            return FlowsReport.DirectionReport(
                from: from.description, to: to.description, packets: s.packets, payloadPackets: s.payloadPackets,
                wireBytes: s.wireBytes, bytes: s.bytes, segments: s.segments, retransmissions: s.retransmissions,
                outOfOrder: s.outOfOrder, keepAlives: s.keepAlives, lateBytes: s.lateBytes, syn: s.synSeen, fin: s.finSeen, rst: s.rstSeen,
                midStream: s.startedMidStream, mss: s.maximumSegmentSize > 0 ? s.maximumSegmentSize : nil,
                gaps: .init(count: s.gaps, bytes: s.gapBytes, list: gaps.map(FlowsReport.Gap.init)),
                conflicts: .init(
                    count: s.conflicts, bytes: s.conflictBytes,
                    list: conflicts.map { .init(offset: $0.offset, length: $0.length, frame: $0.frame) },
                    uncheckedBytes: s.uncheckedOverlapBytes))
        }
    }
}

extension FlowsReport.Gap {
    public init(_ gap: StreamGap) {
        self.init(offset: gap.offset, capturedOffset: gap.capturedOffset, length: gap.length, reason: gap.reason.rawValue)
    }
}
