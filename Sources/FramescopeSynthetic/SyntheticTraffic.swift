import FramescopeCore

/// A deterministic generator of TCP traffic carrying framed messages, for benchmarks and tests.
///
/// `flows` connections are active at once; each carries messages both ways, packed into
/// MSS-sized segments the way a sender does (small messages coalesced, large ones split),
/// with a fraction of segments sent out of order or retransmitted. A connection that has sent
/// its share closes with FINs and a new one takes its place. Everything follows from `seed`.
public struct SyntheticTraffic {
    public enum Framing: String, CaseIterable, Sendable {
        /// Protobuf writeDelimitedTo: SPEC `varint`.
        case varint
        /// A 12-byte header: magic 0xCAFEF00D, type (4), body length (4): SPEC `length:offset=8,width=4,magic=cafef00d,type=4:4`.
        case length
        /// Text lines ending in "\n": SPEC `lines`.
        case lines

        public var spec: String {
            switch self {
            case .varint: "varint"
            case .length: "length:offset=8,width=4,magic=cafef00d,type=4:4"
            case .lines: "lines"
            }
        }
    }

    public struct Options: Sendable {
        public var flows = 1000
        public var framing = Framing.varint
        public var seed: UInt64 = 1
        public var outOfOrderFraction = 0.01
        public var retransmissionFraction = 0.01
        public var maximumSegmentSize = 1448
        /// Bytes a connection sends (both ways together) before it closes, on average.
        public var bytesPerConnection = 1 << 20

        public init() {}
    }

    /// What the generated capture holds, for checking an analysis against.
    public struct Truth: Sendable, Equatable {
        public var spec: String
        public var packets = 0
        public var captureBytes = 0
        public var connections = 0
        public var messagesClientToServer = 0
        public var messagesServerToClient = 0
        public var payloadBytes = 0
        public var outOfOrderSegments = 0
        public var retransmittedSegments = 0
    }

    public let options: Options
    public private(set) var truth: Truth
    private var random: SplitMix64
    private var flows: [Flow] = []
    private var nextPort = 0
    private var clock: Int64 = 1_700_000_000_000_000_000
    private let text: [UInt8]
    private let builder = PacketBuilder()
    /// Packets made but not yet emitted.
    private var outbox: [[UInt8]] = []

    private struct Flow {
        var client: Endpoint
        var server: Endpoint
        var sequence: [UInt32]  // next sequence number per direction (client, server)
        var budget: Int
        var held: [(direction: Int, packet: [UInt8])] = []  // segments held back to reorder or repeat
    }

    public init(options: Options) {
        self.options = options
        truth = Truth(spec: options.framing.spec)
        random = SplitMix64(seed: options.seed)
        var letters: [UInt8] = []
        var r = SplitMix64(seed: options.seed ^ 0x5EED)
        for _ in 0..<(1 << 17) { letters.append(0x61 + UInt8(r.next() % 26)) }
        text = letters
    }

    /// Emits packets (Ethernet frames with their timestamps) until about `bytes` of capture have
    /// been produced, then closes every connection.
    public mutating func generate(bytes target: Int, emit: (Timestamp, [UInt8]) -> Void) {
        var emitted = 0
        func flush() {
            for packet in outbox {
                clock += 2_000 + Int64(random.next() % 8_000)
                emit(Timestamp(nanoseconds: clock), packet)
                emitted += packet.count + 16
                truth.packets += 1
            }
            outbox.removeAll(keepingCapacity: true)
        }
        while flows.count < options.flows {
            flows.append(newFlow())
            handshake(flows[flows.count - 1])
            flush()
        }
        while emitted < target {
            let index = Int(random.next() % UInt64(flows.count))
            let direction = random.next() % 5 < 2 ? 0 : 1
            sendBurst(flow: index, direction: direction)
            if flows[index].budget <= 0 {
                closeFlow(index)
                flows[index] = newFlow()
                handshake(flows[index])
            }
            flush()
        }
        for index in flows.indices { closeFlow(index) }
        flush()
        flows.removeAll()
        truth.captureBytes = emitted + 24
    }

    private mutating func send(_ packet: [UInt8]) { outbox.append(packet) }

    // MARK: Connections

    private mutating func newFlow() -> Flow {
        nextPort += 1
        let host = UInt32(0x0A01_0000) + UInt32(nextPort / 50_000)
        let client = Endpoint(address: IPAddress(ipv4: host), port: UInt16(10_000 + nextPort % 50_000))
        let server = Endpoint(address: IPAddress(ipv4: 0x0A00_0001), port: 9000)
        truth.connections += 1
        let budget = options.bytesPerConnection / 2 + Int(random.next() % UInt64(options.bytesPerConnection))
        return Flow(client: client, server: server, sequence: [UInt32(truncatingIfNeeded: random.next()), UInt32(truncatingIfNeeded: random.next())], budget: budget)
    }

    private mutating func handshake(_ f: Flow) {
        let mss = UInt16(options.maximumSegmentSize)
        send(builder.tcp(from: f.client, to: f.server, sequence: f.sequence[0] &- 1, flags: [.syn], mss: mss))
        send(builder.tcp(from: f.server, to: f.client, sequence: f.sequence[1] &- 1, acknowledgment: f.sequence[0], flags: [.syn, .ack], mss: mss))
        send(builder.tcp(from: f.client, to: f.server, sequence: f.sequence[0], acknowledgment: f.sequence[1], flags: [.ack]))
    }

    private mutating func closeFlow(_ index: Int) {
        releaseHeld(index)
        let f = flows[index]
        send(builder.tcp(from: f.client, to: f.server, sequence: f.sequence[0], acknowledgment: f.sequence[1], flags: [.fin, .ack]))
        send(builder.tcp(from: f.server, to: f.client, sequence: f.sequence[1], acknowledgment: f.sequence[0] &+ 1, flags: [.fin, .ack]))
        send(builder.tcp(from: f.client, to: f.server, sequence: f.sequence[0] &+ 1, acknowledgment: f.sequence[1] &+ 1, flags: [.ack]))
    }

    // MARK: Messages and segments

    /// A few messages written back to back, cut into MSS-sized segments.
    private mutating func sendBurst(flow index: Int, direction: Int) {
        var burst: [UInt8] = []
        for _ in 0..<(1 + Int(random.next() % 6)) {
            appendMessage(to: &burst)
            if direction == 0 { truth.messagesClientToServer += 1 } else { truth.messagesServerToClient += 1 }
        }
        truth.payloadBytes += burst.count
        flows[index].budget -= burst.count
        var offset = 0
        while offset < burst.count {
            let size = min(options.maximumSegmentSize, burst.count - offset)
            let f = flows[index]
            let (from, to) = direction == 0 ? (f.client, f.server) : (f.server, f.client)
            let packet = builder.tcp(
                from: from, to: to, sequence: f.sequence[direction], acknowledgment: f.sequence[1 - direction], flags: [.ack, .psh],
                payload: Array(burst[offset..<(offset + size)]))
            flows[index].sequence[direction] &+= UInt32(size)
            offset += size
            let roll = Double(random.next() % 1_000_000) / 1_000_000
            if roll < options.outOfOrderFraction && flows[index].held.isEmpty {
                flows[index].held.append((direction, packet))  // sent after the next segment: out of order
                truth.outOfOrderSegments += 1
                continue
            }
            send(packet)
            releaseHeld(index)
            if roll > 1 - options.retransmissionFraction {
                send(packet)  // a retransmitted copy
                truth.retransmittedSegments += 1
            }
        }
        // The receiver acknowledges the burst.
        let f = flows[index]
        let (from, to) = direction == 0 ? (f.server, f.client) : (f.client, f.server)
        send(builder.tcp(from: from, to: to, sequence: f.sequence[1 - direction], acknowledgment: f.sequence[direction], flags: [.ack]))
    }

    private mutating func releaseHeld(_ index: Int) {
        for held in flows[index].held { send(held.packet) }
        flows[index].held.removeAll()
    }

    /// Bytes of `value` as a varint.
    static func varintLength(_ value: Int) -> Int {
        var n = 1, v = value >> 7
        while v > 0 { n += 1; v >>= 7 }
        return n
    }

    /// Sizes: mostly 20–200 B, some up to 2 KiB, a few up to 64 KiB.
    private mutating func bodySize() -> Int {
        let roll = random.next() % 100
        if roll < 85 { return 20 + Int(random.next() % 181) }
        if roll < 98 { return 200 + Int(random.next() % 1801) }
        return 2000 + Int(random.next() % 63_537)
    }

    private mutating func appendMessage(to out: inout [UInt8]) {
        let size = bodySize()
        let start = Int(random.next() % UInt64(text.count - size))
        switch options.framing {
        case .varint:
            // A protobuf message of about `size` bytes: field 1 (bytes) holding text.
            let textLength = size - 1 - Self.varintLength(size)
            out.appendVarint(1 + Self.varintLength(textLength) + textLength)
            out.append(0x0A)
            out.appendVarint(textLength)
            out += text[start..<(start + textLength)]
        case .length:
            out += [0xCA, 0xFE, 0xF0, 0x0D]
            out.appendBig(UInt32(random.next() % 16))
            out.appendBig(UInt32(size))
            out += text[start..<(start + size)]
        case .lines:
            out += text[start..<(start + size - 1)]
            out.append(0x0A)
        }
    }
}

/// SplitMix64: small, fast, deterministic.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension [UInt8] {
    /// Appends `value` as a protobuf varint (a length prefix of writeDelimitedTo framing).
    public mutating func appendVarint(_ value: Int) {
        var v = value
        repeat {
            append(UInt8(v & 0x7F) | (v >= 0x80 ? 0x80 : 0))
            v >>= 7
        } while v > 0
    }
}
