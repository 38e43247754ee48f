/// Keeps the first bytes of each direction's stream (up to `bytesPerDirection` of up to
/// `directions` directions, `totalBytes` in all, each until its first gap): the samples
/// `--dissector auto` infers the framing from, and the streams the SPECs next to a failing one
/// are tried on.
public struct InferenceSampler: StreamSink {
    public let bytesPerDirection: Int
    public let directions: Int
    public let totalBytes: Int
    /// Only these connections' directions, when given.
    let only: Set<ConnectionID>?
    /// The directions `isSettled` waits for (`connection << 1 | direction`), until each one's
    /// sample is fixed: cut (full, or at a gap), never to start, or its connection closed (nil:
    /// none awaited).
    private var awaited: Set<Int>?

    /// A connection's samples while it is open.
    public struct Sampling {
        let serverPort: UInt16
        let sampled: Bool
        var samples = PerDirection<FramingInference.Sample?> { _ in nil }
        /// Directions whose sample stopped early (full, or a gap): not known to be whole.
        var cut = PerDirection { _ in false }
        /// The frame of each direction's last segment: parts of one segment are one segment.
        var lastFrame = PerDirection<UInt64> { _ in 0 }
    }

    /// Samples of the finished connections, with their server port.
    private var finished: [(port: UInt16, sample: FramingInference.Sample)] = []
    private var started = 0
    private var kept = 0

    /// - Parameter awaiting: directions whose samples `isSettled` waits for.
    public init(
        bytesPerDirection: Int = 256 << 10, directions: Int = 64, totalBytes: Int = 8 << 20, only connections: Set<ConnectionID>? = nil,
        awaiting: [(connection: ConnectionID, direction: Direction)] = []
    ) {
        self.bytesPerDirection = bytesPerDirection
        self.directions = directions
        self.totalBytes = totalBytes
        only = connections
        awaited = awaiting.isEmpty ? nil : Set(awaiting.map { Self.key($0.connection, $0.direction) })
    }

    /// Whether every awaited direction's sample is what reading to the end would leave (none
    /// awaited: never): a pass for a few connections' samples can stop there. Samples and
    /// budgets only fill in capture order, so what later packets would change is none of theirs.
    public var isSettled: Bool { awaited?.isEmpty == true }

    private static func key(_ connection: ConnectionID, _ d: Direction) -> Int { connection.rawValue << 1 | d.rawValue }

    private mutating func settle(_ connection: ConnectionID, _ d: Direction) {
        awaited?.remove(Self.key(connection, d))
    }

    public mutating func connectionOpened(_ connection: ConnectionInfo) -> Sampling {
        Sampling(serverPort: connection.server.port, sampled: only?.contains(connection.id) ?? true)
    }

    public mutating func data(_ chunk: StreamChunk, state: inout Sampling) {
        let d = chunk.direction
        guard state.sampled, !state.cut[d] else { return }
        if state.samples[d] == nil {
            // Not now, never: the counts only grow, and later chunks lie further on.
            guard started < directions, kept < totalBytes, chunk.capturedOffset == 0 else { return settle(chunk.connection, d) }
            started += 1
            state.samples[d] = FramingInference.Sample(
                bytes: [], segmentStarts: [], complete: false, midStream: chunk.midStream, connection: chunk.connection.rawValue, direction: d)
        }
        let count = state.samples[d]?.bytes.count ?? 0
        let room = min(bytesPerDirection - count, totalBytes - kept)
        if chunk.frame != state.lastFrame[d] { state.samples[d]?.segmentStarts.append(count) }
        state.lastFrame[d] = chunk.frame
        let taken = min(room, chunk.bytes.count)
        state.samples[d]?.bytes.append(contentsOf: chunk.bytes.prefix(taken))
        kept += taken
        if room <= chunk.bytes.count {
            state.cut[d] = true
            settle(chunk.connection, d)
        }
    }

    public mutating func gap(_ gap: StreamGap, state: inout Sampling) {
        state.cut[gap.direction] = true
        settle(gap.connection, gap.direction)
    }

    /// A direction that ended (FIN) within its sample is whole: its end must be a frame boundary.
    public mutating func connectionClosed(_ summary: ConnectionSummary, state: consuming Sampling) {
        let state = state
        for d in Direction.allCases {
            settle(summary.info.id, d)
            guard var sample = state.samples[d] else { continue }
            sample.complete = summary[d].finSeen && !state.cut[d]
            finished.append((state.serverPort, sample))
        }
    }

    /// Every sample, in connection order.
    public var samples: [FramingInference.Sample] {
        finished.map(\.sample).sorted { ($0.connection, $0.direction.rawValue) < ($1.connection, $1.direction.rawValue) }
    }

    /// Samples grouped by their connection's server port, in connection order.
    public var byServerPort: [UInt16: [FramingInference.Sample]] {
        var groups: [UInt16: [FramingInference.Sample]] = [:]
        for s in finished.sorted(by: { ($0.sample.connection, $0.sample.direction.rawValue) < ($1.sample.connection, $1.sample.direction.rawValue) }) {
            groups[s.port, default: []].append(s.sample)
        }
        return groups
    }
}
