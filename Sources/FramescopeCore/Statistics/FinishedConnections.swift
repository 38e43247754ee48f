/// What finished connections add up to, counted as each finishes: the report's totals never
/// need the connections themselves.
public struct FinishedConnections: Sendable {
    public private(set) var count = 0
    /// Connections a dissector applied to.
    public private(set) var dissected = 0
    /// Per direction, over the dissected connections.
    public private(set) var directions = PerDirection { _ in DirectionAnalysis() }
    /// Segments longer than the MSS their receiver announced, in all connections.
    public private(set) var segmentsOverMSS = 0
    /// Payload bytes of the connections no dissector applied to.
    public private(set) var undissectedConnectionBytes: Int64 = 0

    public init() {}

    /// The first packet and the last of all finished connections.
    public private(set) var firstSeen: Timestamp?
    public private(set) var lastSeen: Timestamp?

    public mutating func add(_ analysis: ConnectionAnalysis) {
        count += 1
        let summary = analysis.summary
        firstSeen = min(firstSeen ?? summary.info.firstSeen, summary.info.firstSeen)
        lastSeen = max(lastSeen ?? summary.lastSeen, summary.lastSeen)
        segmentsOverMSS += summary[.clientToServer].segmentsOverMSS + summary[.serverToClient].segmentsOverMSS
        guard let analyzed = analysis.directions else {
            undissectedConnectionBytes += summary[.clientToServer].bytes + summary[.serverToClient].bytes
            return
        }
        dissected += 1
        for d in Direction.allCases { directions[d].merge(analyzed[d]) }
    }
}
