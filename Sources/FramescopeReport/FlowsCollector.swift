import FramescopeCore

/// Collects connection summaries with the first gaps and conflicts of each direction.
/// Per-packet data events are ignored: `flows` needs only counts.
public struct FlowsCollector: StatelessStreamSink {
    /// Gaps and conflicts listed per direction (all are counted).
    public static let listLimit = 32

    public struct Details: Sendable {
        public var gaps: [[StreamGap]] = [[], []]
        public var conflicts: [[StreamConflict]] = [[], []]
    }

    public private(set) var connections: [ConnectionSummary] = []
    private var details: [ConnectionID: Details] = [:]
    public private(set) var finishedDetails: [ConnectionID: Details] = [:]
    /// Off for long live captures: connections are then not kept (only their gaps' details are dropped too).
    public let retainSummaries: Bool

    public init(retainSummaries: Bool = true) { self.retainSummaries = retainSummaries }

    public mutating func gap(_ gap: StreamGap) {
        let d = gap.direction.rawValue
        if details[gap.connection, default: Details()].gaps[d].count < Self.listLimit {
            details[gap.connection, default: Details()].gaps[d].append(gap)
        }
    }

    public mutating func conflict(_ conflict: StreamConflict) {
        let d = conflict.direction.rawValue
        if details[conflict.connection, default: Details()].conflicts[d].count < Self.listLimit {
            details[conflict.connection, default: Details()].conflicts[d].append(conflict)
        }
    }

    public mutating func connectionClosed(_ summary: ConnectionSummary) {
        let found = details.removeValue(forKey: summary.info.id)
        guard retainSummaries else { return }
        connections.append(summary)
        if let found { finishedDetails[summary.info.id] = found }
    }

    /// Connections in ID order (the order of first appearance).
    public var sortedConnections: [ConnectionSummary] { connections.sorted { $0.info.id < $1.info.id } }
}
