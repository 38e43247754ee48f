/// What finished connections add up to, counted as each finishes: the report's totals never
/// need the connections themselves.
public struct FinishedConnections: Sendable {
    public internal(set) var count = 0
    /// Connections a dissector applied to.
    public internal(set) var dissected = 0
    /// Per direction, over the dissected connections: the counts (message sizes and assembly
    /// latencies are the analyzer's, `AnalysisContext.sizes` and `latencies`).
    public internal(set) var directions = PerDirection { _ in DirectionAnalysis() }
    /// Segments longer than the MSS their receiver announced, in all connections.
    public internal(set) var segmentsOverMSS = 0
    /// Payload bytes of the connections no dissector applied to.
    public internal(set) var undissectedConnectionBytes: Int64 = 0

    public init() {}

    /// The first packet and the last of all finished connections.
    public internal(set) var firstSeen: Timestamp?
    public internal(set) var lastSeen: Timestamp?

    public mutating func add(_ analysis: ConnectionAnalysis) {
        count += 1
        // Read in place: a copy of the summary or the figures retains every box they hold.
        let first = analysis.summary.info.firstSeen, last = analysis.summary.lastSeen
        firstSeen = min(firstSeen ?? first, first)
        lastSeen = max(lastSeen ?? last, last)
        segmentsOverMSS += analysis.summary.directions.clientToServer.segmentsOverMSS + analysis.summary.directions.serverToClient.segmentsOverMSS
        guard analysis.isDissected else {
            undissectedConnectionBytes += analysis.summary.directions.clientToServer.bytes + analysis.summary.directions.serverToClient.bytes
            return
        }
        dissected += 1
        analysis.addFigures(to: &directions)
    }
}
