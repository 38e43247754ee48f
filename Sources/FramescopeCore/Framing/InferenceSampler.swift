/// Keeps the first bytes of each direction's stream (64 KiB of up to 64 directions by default,
/// each until its first gap): the samples `--dissector auto` infers the framing from, and the
/// streams the SPECs next to a failing one are tried on.
public struct InferenceSampler: StreamSink {
    public let bytesPerDirection: Int
    public let directions: Int
    /// Only these connections' directions, when given.
    let only: Set<ConnectionID>?

    /// A connection's samples while it is open.
    public struct Sampling {
        let serverPort: UInt16
        let sampled: Bool
        var samples = PerDirection<FramingInference.Sample?> { _ in nil }
        /// Directions whose sample stopped early (full, or a gap): not known to be whole.
        var cut = PerDirection { _ in false }
    }

    /// Samples of the finished connections: (connection, server port, sample).
    private var finished: [(id: ConnectionID, port: UInt16, direction: Direction, sample: FramingInference.Sample)] = []
    private var started = 0

    public init(bytesPerDirection: Int = 64 << 10, directions: Int = 64, only connections: Set<ConnectionID>? = nil) {
        self.bytesPerDirection = bytesPerDirection
        self.directions = directions
        only = connections
    }

    public mutating func connectionOpened(_ connection: ConnectionInfo) -> Sampling {
        Sampling(serverPort: connection.server.port, sampled: only?.contains(connection.id) ?? true)
    }

    public mutating func data(_ chunk: StreamChunk, state: inout Sampling) {
        let d = chunk.direction
        guard state.sampled, !state.cut[d] else { return }
        if state.samples[d] == nil {
            guard started < directions, chunk.capturedOffset == 0 else { return }
            started += 1
            state.samples[d] = FramingInference.Sample(bytes: [], segmentStarts: [], complete: false)
        }
        let count = state.samples[d]?.bytes.count ?? 0, room = bytesPerDirection - count
        state.samples[d]?.segmentStarts.append(count)
        state.samples[d]?.bytes.append(contentsOf: chunk.bytes.prefix(room))
        if room <= chunk.bytes.count { state.cut[d] = true }
    }

    public mutating func gap(_ gap: StreamGap, state: inout Sampling) {
        state.cut[gap.direction] = true
    }

    /// A direction that ended (FIN) within its sample is whole: its end must be a frame boundary.
    public mutating func connectionClosed(_ summary: ConnectionSummary, state: consuming Sampling) {
        let state = state
        for d in Direction.allCases {
            guard var sample = state.samples[d] else { continue }
            sample.complete = summary[d].finSeen && !state.cut[d]
            finished.append((summary.info.id, state.serverPort, d, sample))
        }
    }

    /// Every sample, in connection order.
    public var samples: [(id: ConnectionID, direction: Direction, sample: FramingInference.Sample)] {
        finished.sorted { ($0.id, $0.direction.rawValue) < ($1.id, $1.direction.rawValue) }.map { ($0.id, $0.direction, $0.sample) }
    }

    /// Samples grouped by their connection's server port, in connection order.
    public var byServerPort: [UInt16: [FramingInference.Sample]] {
        var groups: [UInt16: [FramingInference.Sample]] = [:]
        for s in finished.sorted(by: { ($0.id, $0.direction.rawValue) < ($1.id, $1.direction.rawValue) }) {
            groups[s.port, default: []].append(s.sample)
        }
        return groups
    }
}

extension FramingInference {
    /// What inference found for one server port.
    public struct PortChoice: Sendable {
        public var port: UInt16
        /// The best candidates, best first.
        public var candidates: [Candidate]
        public var streams: Int
        /// The best candidate, when it scores enough to be used.
        public var chosen: Candidate? {
            guard let best = candidates.first, best.score >= FramingInference.minimumScore else { return nil }
            return best
        }
    }

    /// The right framing puts boundaries at segment starts far more often than chance does;
    /// merged writes and corrupt messages keep it well below 100%.
    public static let minimumScore = 0.2

    /// Per server port (one capture may hold several protocols), in port order.
    public static func choose(_ byServerPort: [UInt16: [Sample]]) -> [PortChoice] {
        byServerPort.sorted { $0.key < $1.key }.map { port, samples in
            PortChoice(port: port, candidates: infer(samples), streams: samples.count)
        }
    }
}
