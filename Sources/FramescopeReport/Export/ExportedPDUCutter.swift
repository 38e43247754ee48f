import FramescopeCore

/// `--export-messages … --export-format pdu`, the second pass: cuts the selected messages out of
/// the reassembled streams and hands each on as a Wireshark "exported PDU" record (link type
/// 252: tags for the addresses, ports and original frame, then the message's bytes).
public struct ExportedPDUCutter: StatelessStreamSink {
    public struct Record {
        public var bytes: [UInt8]
        public var timestamp: Timestamp
    }

    /// Per direction of a connection: its messages by offset, the next one at `next`.
    private struct Queue {
        var places: [MessageExport.Place]
        var next = 0
        var buffer: [UInt8] = []
    }

    private var queues: [Int: Queue] = [:]  // key: connection * 2 + direction
    private var endpoints: [ConnectionID: (client: Endpoint, server: Endpoint)] = [:]
    private let emit: (Record) -> Void
    public private(set) var written = 0

    public init(_ places: [MessageExport.Place], emit: @escaping (Record) -> Void) {
        for (key, group) in Dictionary(grouping: places, by: { $0.connection.rawValue * 2 + $0.direction.rawValue }) {
            queues[key] = Queue(places: group.sorted { $0.offset < $1.offset })
        }
        self.emit = emit
    }

    public mutating func connectionOpened(_ connection: ConnectionInfo) {
        if queues[connection.id.rawValue * 2] != nil || queues[connection.id.rawValue * 2 + 1] != nil {
            endpoints[connection.id] = (connection.client, connection.server)
        }
    }

    public mutating func data(_ chunk: StreamChunk) {
        let key = chunk.connection.rawValue * 2 + chunk.direction.rawValue
        guard var queue = queues[key] else { return }
        queues[key] = nil  // mutated alone, put back below
        var from = chunk.offset
        let end = chunk.offset + Int64(chunk.bytes.count)
        while queue.next < queue.places.count && from < end {
            let place = queue.places[queue.next]
            let placeEnd = place.offset + place.length
            if placeEnd <= from {  // (never: messages come whole and in order) skip what passed
                queue.next += 1
                queue.buffer.removeAll(keepingCapacity: true)
                continue
            }
            let lower = max(from, place.offset), upper = min(end, placeEnd)
            if lower >= upper { break }  // the message starts after this chunk
            queue.buffer.append(contentsOf: chunk.bytes[Int(lower - chunk.offset)..<Int(upper - chunk.offset)])
            from = upper
            if upper == placeEnd {
                if let (client, server) = endpoints[chunk.connection] {
                    let (source, destination) = chunk.direction == .clientToServer ? (client, server) : (server, client)
                    emit(Record(bytes: Self.record(queue.buffer, from: source, to: destination, frame: place.lastFrame), timestamp: chunk.timestamp))
                    written += 1
                }
                queue.buffer.removeAll(keepingCapacity: true)
                queue.next += 1
            }
        }
        queues[key] = queue
    }

    public mutating func connectionClosed(_ summary: ConnectionSummary) {
        endpoints[summary.info.id] = nil
        queues[summary.info.id.rawValue * 2] = nil
        queues[summary.info.id.rawValue * 2 + 1] = nil
    }

    /// Tags (big-endian type and length, values padded to 4 bytes) and the PDU: Wireshark's
    /// exported_pdu.h. Protocol "data": Wireshark shows the bytes; Decode As picks a dissector.
    static func record(_ pdu: [UInt8], from source: Endpoint, to destination: Endpoint, frame: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        func tag(_ type: UInt16, _ value: [UInt8]) {
            out += [UInt8(type >> 8), UInt8(type & 0xFF), UInt8(value.count >> 8), UInt8(value.count & 0xFF)] + value
            out += [UInt8](repeating: 0, count: (4 - value.count % 4) % 4)
        }
        func u32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        func u64(_ v: UInt64) -> [UInt8] { u32(UInt32(v >> 32)) + u32(UInt32(v & 0xFFFF_FFFF)) }
        tag(12, Array("data".utf8))  // EXP_PDU_TAG_PROTO_NAME
        if source.address.isIPv4 {
            tag(20, u32(source.address.ipv4))  // IPV4_SRC
            tag(21, u32(destination.address.ipv4))  // IPV4_DST
        } else {
            tag(22, u64(source.address.high) + u64(source.address.low))  // IPV6_SRC
            tag(23, u64(destination.address.high) + u64(destination.address.low))  // IPV6_DST
        }
        tag(24, u32(2))  // PORT_TYPE: TCP
        tag(25, u32(UInt32(source.port)))  // SRC_PORT
        tag(26, u32(UInt32(destination.port)))  // DST_PORT
        tag(30, u32(UInt32(truncatingIfNeeded: frame)))  // ORIG_FNO: the frame that completed it
        out += [0, 0, 0, 0]  // END_OF_OPT
        return out + pdu
    }
}
