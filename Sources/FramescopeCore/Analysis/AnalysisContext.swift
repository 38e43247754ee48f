/// What the analyzers of all connections share: the evidence, the fine-grained size and
/// latency histograms, the recovery budget and the messages waiting for `--messages`.
public struct AnalysisContext: Sendable {
    public internal(set) var evidence = EvidenceRecorder()
    /// Message sizes and assembly latencies (µs) of all connections, per direction, at fine
    /// precision (1/64); the per-direction histograms are coarse.
    public internal(set) var sizes = PerDirection { _ in QuantileHistogram(bits: 6) }
    public internal(set) var latencies = PerDirection { _ in QuantileHistogram(bits: 6) }
    public internal(set) var recoveryBudget = RecoveryBudget()
    /// Messages completed since the last delivery, when `recordMessages` is set.
    var messages: [MessageRecord] = []
    var recordMessages = false

    /// How a direction picked up mid-stream is framed.
    public internal(set) var midStream = MidStreamFraming.search
    /// Segments longer than this are framed as the wire carried them, cut in pieces this long
    /// (`--mss`); 0: as captured.
    public internal(set) var recutMSS = 0
    /// Response times by request type, over every connection.
    public internal(set) var responseTimes = ResponseTimes()
    /// Assembly latencies (µs) by type value, per direction, over every connection: the first
    /// `LatencyByType.limit` type values seen.
    public internal(set) var latencyByType = PerDirection { _ in LatencyByType() }
    /// Messages completed during the current chunk (type, last segment's time in ns), for the
    /// analyzer to pair requests with responses; emptied after each.
    var completed: [(type: UInt64?, time: Int64)] = []
    /// `--export-messages`: what to select, and the frames selected so far.
    public var export: MessageExport?

    public init(maxRecoveryBytes: Int = 32 << 20, midStream: MidStreamFraming = .search, evidenceBits: Double = RecoveryBudget.defaultThreshold) {
        recoveryBudget.limit = maxRecoveryBytes
        recoveryBudget.threshold = evidenceBits
        self.midStream = midStream
    }
}

/// Where framing starts in a direction that began without a SYN.
public enum MidStreamFraming: String, Sendable, CaseIterable {
    /// At the first boundary recovery finds with enough evidence; the bytes before it are
    /// `leadingBytes`.
    case search
    /// At the first captured byte, as if a message started there.
    case start
}

/// Assembly latency histograms by message type value, for the `limit` lowest values seen: a
/// type field read from junk cannot grow it without bound, and which values are timed does not
/// depend on the order messages came in (workers' and shards' figures combine exactly).
public struct LatencyByType: Sendable {
    public static let limit = 256
    public private(set) var byType: [UInt64: QuantileHistogram] = [:]
    /// Messages of other type values (not timed by type).
    public private(set) var untimed = 0
    /// The highest value timed, once `limit` are (the one a lower newcomer replaces).
    private var highest: UInt64?

    mutating func add(_ microseconds: Int64, type: UInt64) {
        if byType[type] == nil {
            guard make(type) else {
                untimed += 1
                return
            }
        }
        byType[type]!.add(microseconds)
    }

    /// Starts timing `type`, replacing the highest value timed when `limit` are and it is
    /// lower; false when it is not to be timed.
    private mutating func make(_ type: UInt64) -> Bool {
        guard byType.count == Self.limit else {
            byType[type] = QuantileHistogram(bits: 6)
            return true
        }
        let top = highest ?? byType.keys.max()!
        guard type < top else {
            highest = top
            return false
        }
        untimed += Int(byType.removeValue(forKey: top)!.count)
        byType[type] = QuantileHistogram(bits: 6)
        highest = byType.keys.max()
        return true
    }

    /// Another set of connections' latencies added: the lowest values of both kept.
    mutating func absorb(_ other: LatencyByType) {
        untimed += other.untimed
        for (type, histogram) in other.byType { byType[type, default: QuantileHistogram(bits: 6)].merge(histogram) }
        if byType.count > Self.limit {
            for type in byType.keys.sorted().dropFirst(Self.limit) { untimed += Int(byType.removeValue(forKey: type)!.count) }
        }
        highest = nil
    }
}
