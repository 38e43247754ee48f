import FramescopeSynthetic
@testable import FramescopeCore

/// A sink that keeps everything, for assertions.
struct RecordingSink: StatelessStreamSink {
    var opened: [ConnectionInfo] = []
    var bytes: [ConnectionID: [[UInt8]]] = [:]
    var frames: [ConnectionID: [[UInt64]]] = [:]
    var gaps: [StreamGap] = []
    var conflicts: [StreamConflict] = []
    var closed: [ConnectionSummary] = []

    mutating func connectionOpened(_ connection: ConnectionInfo) {
        opened.append(connection)
        bytes[connection.id] = [[], []]
        frames[connection.id] = [[], []]
    }

    mutating func data(_ chunk: StreamChunk) {
        precondition(Int64(bytes[chunk.connection]![chunk.direction.rawValue].count) == chunk.capturedOffset)
        bytes[chunk.connection]![chunk.direction.rawValue] += chunk.bytes
        frames[chunk.connection]![chunk.direction.rawValue].append(chunk.frame)
    }

    mutating func gap(_ gap: StreamGap) { gaps.append(gap) }
    mutating func conflict(_ conflict: StreamConflict) { conflicts.append(conflict) }
    mutating func connectionClosed(_ summary: ConnectionSummary) { closed.append(summary) }

    func summary(_ id: Int) -> ConnectionSummary { closed.first { $0.info.id.rawValue == id }! }
    func stream(_ id: Int, _ direction: Direction = .clientToServer) -> [UInt8] { bytes[ConnectionID(id)]![direction.rawValue] }
}

let client = Endpoint("10.0.0.1:40000")!
let server = Endpoint("10.0.0.2:7000")!

/// Feeds segments (built as real packets) through a flow table and returns its sink.
struct Conversation {
    var table = FlowTable(sink: RecordingSink())
    var frame: UInt64 = 0
    let builder = PacketBuilder()

    init(options: ReassemblyOptions = ReassemblyOptions()) {
        table = FlowTable(sink: RecordingSink(), options: options)
    }

    mutating func send(
        _ from: Endpoint, _ to: Endpoint, seq: UInt32, _ flags: TCPFlags = [.ack], _ payload: [UInt8] = [],
        captureLength: Int? = nil, at seconds: Int64? = nil
    ) {
        frame += 1
        var packet = builder.tcp(from: from, to: to, sequence: seq, flags: flags, payload: payload)
        if let captureLength { packet = Array(packet.prefix(packet.count - payload.count + captureLength)) }
        let info = CaptureInfo(
            frame: frame, timestamp: Timestamp(seconds: seconds ?? Int64(frame), nanoseconds: 0), linkType: .ethernet,
            captureLength: packet.count, originalLength: packet.count)
        packet.withUnsafeBytes { table.process($0, info: info) }
    }

    /// Client handshake with ISN `clientISN`, server ISN `serverISN`.
    mutating func handshake(clientISN: UInt32 = 1000, serverISN: UInt32 = 5000) {
        send(client, server, seq: clientISN, [.syn])
        send(server, client, seq: serverISN, [.syn, .ack])
        send(client, server, seq: clientISN &+ 1, [.ack])
    }

    mutating func finish() -> RecordingSink {
        table.finish()
        return table.sink
    }
}

/// `count` bytes of a recognisable pattern starting at stream offset `offset`.
func pattern(_ offset: Int, _ count: Int) -> [UInt8] {
    (offset..<(offset + count)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
}

/// All orderings of `items` (Heap's algorithm).
func permutations<T>(_ items: [T]) -> [[T]] {
    var result: [[T]] = []
    var a = items
    func generate(_ n: Int) {
        if n <= 1 { result.append(a); return }
        for i in 0..<n {
            generate(n - 1)
            a.swapAt(n % 2 == 0 ? i : 0, n - 1)
        }
    }
    generate(a.count)
    return result
}
