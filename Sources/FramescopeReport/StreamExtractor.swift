import FramescopeCore

#if canImport(Glibc)
import Glibc
#endif

/// Writes each direction's reassembled bytes to `DIR/<id>-<from>-<to>.bin` (tcpflow-style
/// `ip.port` names) and builds `index.json` with byte counts and gap maps. Gaps are never
/// filled: the file holds the captured bytes in order, the gap map says where holes were. A
/// file is written as `NAME.partial` and renamed when its connection ends, so a file under its
/// own name is always whole (a killed run leaves `.partial` files, never a short `.bin`).
public struct StreamExtractor: StatelessStreamSink {
    public struct IndexEntry: Sendable {
        public var connection: Int
        public var direction: String
        public var from: String
        public var to: String
        /// File name inside the output directory; null when the direction carried no bytes.
        public var file: String?
        public var bytes: Int64
        public var gaps: [FlowsReport.Gap]
        public var conflicts: Int
    }

    public struct Index: Sendable {
        public var schema = "framescope.extract/1"
        public var streams: [IndexEntry]
    }

    /// Buffered output of one direction; written out when it fills or the connection ends.
    private struct Pending {
        var name: String
        var buffer: [UInt8] = []
        var created = false
        var gaps: [FlowsReport.Gap] = []
    }

    public let directory: String
    public private(set) var entries: [IndexEntry] = []
    public private(set) var writeErrors: [String] = []
    private var open: [ConnectionID: [Pending]] = [:]
    private var bufferedTotal = 0
    private static let flushSize = 64 << 10
    private static let maxBufferedTotal = 32 << 20

    public init(directory: String) { self.directory = directory }

    public mutating func connectionOpened(_ connection: ConnectionInfo) {
        let id = connection.id.rawValue
        let number = String(id), padded = String(repeating: "0", count: max(0, 6 - number.count)) + number
        open[connection.id] = [
            Pending(name: "\(padded)-\(Self.name(connection.client))-\(Self.name(connection.server)).bin"),
            Pending(name: "\(padded)-\(Self.name(connection.server))-\(Self.name(connection.client)).bin"),
        ]
    }

    public mutating func data(_ chunk: StreamChunk) {
        let d = chunk.direction.rawValue
        open[chunk.connection]![d].buffer.append(contentsOf: chunk.bytes)
        bufferedTotal += chunk.bytes.count
        if open[chunk.connection]![d].buffer.count >= Self.flushSize { flush(chunk.connection, d) }
        if bufferedTotal > Self.maxBufferedTotal {
            for (id, pending) in open { for d in pending.indices { flush(id, d) } }
        }
    }

    public mutating func gap(_ gap: StreamGap) {
        open[gap.connection]![gap.direction.rawValue].gaps.append(FlowsReport.Gap(gap))
    }

    public mutating func connectionClosed(_ summary: ConnectionSummary) {
        let id = summary.info.id
        for direction in Direction.allCases {
            flush(id, direction.rawValue)
            let pending = open[id]![direction.rawValue]
            if pending.created {
                let path = directory + "/" + pending.name
                if rename(path + ".partial", path) != 0 { writeErrors.append("\(path): \(String(cString: strerror(errno)))") }
            }
            let s = summary[direction]
            let (from, to) = direction == .clientToServer ? (summary.info.client, summary.info.server) : (summary.info.server, summary.info.client)
            entries.append(
                IndexEntry(
                    connection: id.rawValue, direction: direction.description, from: from.description, to: to.description,
                    file: pending.created ? pending.name : nil, bytes: s.bytes, gaps: pending.gaps, conflicts: s.conflicts))
        }
        open[id] = nil
    }

    /// The index, streams in connection order.
    public var index: Index {
        Index(streams: entries.sorted { ($0.connection, $0.direction) < ($1.connection, $1.direction) })
    }

    private mutating func flush(_ id: ConnectionID, _ d: Int) {
        guard let pending = open[id]?[d], !pending.buffer.isEmpty else { return }
        let path = directory + "/" + pending.name + ".partial"
        if let file = fopen(path, pending.created ? "ab" : "wb") {
            let written = pending.buffer.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
            if written != pending.buffer.count { writeErrors.append("\(path): short write") }
            fclose(file)
        } else {
            writeErrors.append("\(path): \(String(cString: strerror(errno)))")
        }
        bufferedTotal -= pending.buffer.count
        open[id]![d].buffer.removeAll(keepingCapacity: false)
        open[id]![d].created = true
    }

    /// `ip.port`, as tcpflow names its files.
    static func name(_ endpoint: Endpoint) -> String {
        "\(endpoint.address).\(endpoint.port)"
    }
}
