/// Why a packet was not handed to the flow table. Every skipped packet is counted under one reason.
public enum SkipReason: Int, CaseIterable, Sendable, CustomStringConvertible {
    case unsupportedLinkType
    case truncatedLinkHeader
    case notIP
    case truncatedIPHeader
    case badIPHeader
    case ipFragment
    case notTCP
    case truncatedTCPHeader
    case badTCPHeader

    /// A stable key for reports.
    public var description: String {
        switch self {
        case .unsupportedLinkType: "unsupported-link-type"
        case .truncatedLinkHeader: "truncated-link-header"
        case .notIP: "not-ip"
        case .truncatedIPHeader: "truncated-ip-header"
        case .badIPHeader: "bad-ip-header"
        case .ipFragment: "ip-fragment"
        case .notTCP: "not-tcp"
        case .truncatedTCPHeader: "truncated-tcp-header"
        case .badTCPHeader: "bad-tcp-header"
        }
    }
}

/// Packets seen and skipped, by reason. A fixed array indexed by `SkipReason`, no hashing.
public struct DecodeStatistics: Sendable {
    public var packets = 0
    public var tcpSegments = 0
    /// TCP segments whose payload the capture's snaplen cut, and the payload bytes it cut.
    public var cutSegments = 0
    public var cutBytes: Int64 = 0
    public private(set) var skipped = [Int](repeating: 0, count: SkipReason.allCases.count)

    public init() {}

    public mutating func count(_ reason: SkipReason) { skipped[reason.rawValue] += 1 }

    public subscript(reason: SkipReason) -> Int { skipped[reason.rawValue] }
}

extension DecodeStatistics {
    public mutating func absorb(_ other: DecodeStatistics) {
        packets += other.packets
        tcpSegments += other.tcpSegments
        cutSegments += other.cutSegments
        cutBytes += other.cutBytes
        for i in skipped.indices { skipped[i] += other.skipped[i] }
    }
}
