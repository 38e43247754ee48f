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

    /// How an application writes: the sizes of its messages and how writes meet segments.
    public enum Shape: String, CaseIterable, Sendable {
        /// Bursts of 1–6 messages either way, mostly 20–200 B, some up to 64 KiB.
        case mixed
        /// A request (20–300 B), then 1–3 responses (20 B–2 KiB), each its own write.
        case requestResponse = "request-response"
        /// The server streams 20–100 messages of 100 B–8 KiB in one write, cut into full segments
        /// wherever they fall; the client sends a small message now and then.
        case bulk
        /// Many small messages (5–80 B) coalesced into segments as Nagle's algorithm does.
        case nagle
        /// A small request, then one message of 64 KiB–1 MiB.
        case huge
    }

    /// What a varint-framed message carries.
    public enum Bodies: String, CaseIterable, Sendable {
        /// A protobuf message: field 1 (bytes) holding text.
        case protobuf
        /// Random bytes: almost never valid protobuf, so every body check fails.
        case random
    }

    public struct Options: Sendable {
        public var flows = 1000
        public var framing = Framing.varint
        /// Bodies of `--framing varint` messages.
        public var bodies = Bodies.protobuf
        /// Messages framed by this SPEC instead of `framing` (length-field and delimiter SPECs).
        public var spec: DissectorSpec?
        public var shape = Shape.mixed
        public var serverPort: UInt16 = 9000
        public var seed: UInt64 = 1
        public var outOfOrderFraction = 0.01
        public var retransmissionFraction = 0.01
        public var maximumSegmentSize = 1448
        /// Bytes a connection sends (both ways together) before it closes, on average.
        public var bytesPerConnection = 1 << 20
        /// The capture starts after the first connections opened: their handshakes are not in it
        /// and each of their directions is picked up inside a write, at a random byte.
        public var lateStart = false
        /// Fraction of writes that begin with junk: for varint a bogus 5-byte length (4294967295)
        /// and up to 16 random bytes, for the 12-byte header 1–32 bytes without the magic.
        public var junkFraction = 0.0
        /// Fraction of connections whose client closes in the middle of a message and sends the
        /// rest of its buffer on a new connection (which then begins mid-message).
        public var reconnectFraction = 0.0
        /// Endpoints in 2001:db8::/32 (IPv6 headers) instead of 10.0.0.0/8.
        public var ipv6 = false

        public init() {}
    }

    public let options: Options
    public private(set) var truth: Truth
    private var random: SplitMix64
    private var flows: [Flow] = []
    private var nextPort = 0
    private var clock: Int64 = 1_700_000_000_000_000_000
    private let text: [UInt8]
    /// Random bytes that `Bodies.random` bodies are cut from.
    private let noise: [UInt8]
    private let builder = PacketBuilder()
    private var specWriter: SpecFrameWriter?
    /// Packets made but not yet emitted.
    private var outbox: [[UInt8]] = []

    private struct Flow {
        var client: Endpoint
        var server: Endpoint
        var sequence: [UInt32]  // next sequence number per direction (client, server)
        var budget: Int
        var held: [(direction: Int, packet: [UInt8])] = []  // segments held back to reorder or repeat
        /// Per direction: picked up mid-stream and no message start seen yet.
        var beforeFirstBoundary = [false, false]
        /// Per direction: the next write is cut where the capture starts.
        var pickUpInsideNextWrite = [false, false]
        /// Bytes of each direction in the capture so far.
        var captured = [0, 0]
    }

    /// A write's bytes, in order.
    private struct Piece {
        var length: Int
        var isMessage: Bool
        /// A stream's preamble: neither a message nor junk.
        var isPreamble = false
    }

    /// Every message, when `recordsMessages` is set.
    public private(set) var messages: [MessageTruth] = []
    public var recordsMessages = false

    public init(options: Options) {
        self.options = options
        truth = Truth(spec: options.spec?.text ?? options.framing.spec)
        random = SplitMix64(seed: options.seed)
        var letters: [UInt8] = []
        var r = SplitMix64(seed: options.seed ^ 0x5EED)
        // Huge messages need more text (the default size keeps the classic captures as they were).
        let letterCount = options.spec != nil || options.shape == .huge ? (1 << 20) + (1 << 17) : 1 << 17
        for _ in 0..<letterCount { letters.append(0x61 + UInt8(r.next() % 26)) }
        text = letters
        noise = options.bodies == .random ? (0..<(1 << 17)).map { _ in UInt8(truncatingIfNeeded: r.next()) } : []
    }

    /// Messages framed by `options.spec`; throws for a SPEC it cannot write (postgres, body=N).
    public init(spec: DissectorSpec, options: Options) throws(SpecFrameWriter.Unsupported) {
        var options = options
        options.spec = spec
        self.init(options: options)
        var r = SplitMix64(seed: options.seed ^ 0x5BEC)
        specWriter = try SpecFrameWriter(spec: spec, random: &r)
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
            if options.lateStart {
                // Opened before the capture: no handshake, each direction picked up inside a write.
                flows[flows.count - 1].beforeFirstBoundary = [true, true]
                flows[flows.count - 1].pickUpInsideNextWrite = [true, true]
            } else {
                handshake(flows[flows.count - 1])
            }
            flush()
        }
        while emitted < target {
            let index = Int(random.next() % UInt64(flows.count))
            exchange(flow: index)
            if flows[index].budget <= 0 {
                if options.reconnectFraction > 0 && Double(random.next() % 1_000_000) / 1_000_000 < options.reconnectFraction {
                    reconnect(index)
                } else {
                    closeFlow(index)
                    flows[index] = newFlow()
                    handshake(flows[index])
                }
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
        let client = Endpoint(address: address(ipv4: host), port: UInt16(10_000 + nextPort % 50_000))
        let server = Endpoint(address: address(ipv4: 0x0A00_0001), port: options.serverPort)
        truth.connections += 1
        let budget = options.bytesPerConnection / 2 + Int(random.next() % UInt64(options.bytesPerConnection))
        return Flow(client: client, server: server, sequence: [UInt32(truncatingIfNeeded: random.next()), UInt32(truncatingIfNeeded: random.next())], budget: budget)
    }

    /// `ipv4`, or with `ipv6` the address of 2001:db8::/32 that ends in the same four bytes.
    private func address(ipv4: UInt32) -> IPAddress {
        options.ipv6 ? IPAddress(high: 0x2001_0DB8_0000_0000, low: UInt64(ipv4)) : IPAddress(ipv4: ipv4)
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

    /// Message sizes of a shape.
    private enum Sizes {
        case mixed, request, response, bulk, small, huge
    }

    /// One exchange on a connection, as the shape writes it.
    private mutating func exchange(flow index: Int) {
        switch options.shape {
        case .mixed:
            let direction = random.next() % 5 < 2 ? 0 : 1
            sendBurst(flow: index, direction: direction, messages: nil, sizes: .mixed)
        case .requestResponse:
            sendBurst(flow: index, direction: 0, messages: 1, sizes: .request)
            for _ in 0...(random.next() % 3) { sendBurst(flow: index, direction: 1, messages: 1, sizes: .response) }
        case .bulk:
            if random.next() % 4 == 0 { sendBurst(flow: index, direction: 0, messages: 1, sizes: .request) }
            sendBurst(flow: index, direction: 1, messages: 20 + Int(random.next() % 81), sizes: .bulk)
        case .nagle:
            sendBurst(flow: index, direction: Int(random.next() % 2), messages: 2 + Int(random.next() % 40), sizes: .small)
        case .huge:
            sendBurst(flow: index, direction: 0, messages: 1, sizes: .request)
            sendBurst(flow: index, direction: 1, messages: 1, sizes: .huge)
        }
    }

    /// A few messages written back to back (after junk, sometimes), cut into MSS-sized segments.
    private mutating func sendBurst(flow index: Int, direction: Int, messages: Int?, sizes: Sizes) {
        var burst: [UInt8] = []
        var pieces: [Piece] = []
        if options.junkFraction > 0 && Double(random.next() % 1_000_000) / 1_000_000 < options.junkFraction {
            let before = burst.count
            appendJunk(to: &burst)
            pieces.append(Piece(length: burst.count - before, isMessage: false))
        }
        // Preambles go first in the client's stream (the HTTP/2 client preface).
        if direction == 0, flows[index].captured[0] == 0, !flows[index].pickUpInsideNextWrite[0], case .lengthField(let d)? = options.spec?.kind,
            !d.preamble.isEmpty
        {
            burst += d.preamble.array
            pieces.append(Piece(length: d.preamble.count, isMessage: false, isPreamble: true))
        }
        appendMessages(messages ?? 1 + Int(random.next() % 6), sizes: sizes, to: &burst, pieces: &pieces)
        truth.payloadBytes += burst.count
        flows[index].budget -= burst.count
        var from = 0
        if flows[index].pickUpInsideNextWrite[direction] {
            flows[index].pickUpInsideNextWrite[direction] = false
            from = Int(random.next() % UInt64(burst.count))
        }
        transmit(burst, pieces: pieces, captured: from..<burst.count, flow: index, direction: direction)
    }

    /// The client writes a burst and closes in the middle of a message; the rest of its buffer
    /// goes out first on a new connection.
    private mutating func reconnect(_ index: Int) {
        var burst: [UInt8] = []
        var pieces: [Piece] = []
        appendMessages(2 + Int(random.next() % 5), sizes: .mixed, to: &burst, pieces: &pieces)
        truth.payloadBytes += burst.count
        // A cut strictly inside a message.
        var cut = 0
        repeat { cut = 1 + Int(random.next() % UInt64(burst.count - 1)) } while isMessageBoundary(cut, pieces)
        transmit(burst, pieces: pieces, captured: 0..<cut, flow: index, direction: 0)
        closeFlow(index)
        flows[index] = newFlow()
        handshake(flows[index])
        transmit(burst, pieces: pieces, captured: cut..<burst.count, flow: index, direction: 0)
    }

    private mutating func appendMessages(_ count: Int, sizes: Sizes, to burst: inout [UInt8], pieces: inout [Piece]) {
        for _ in 0..<count {
            let before = burst.count
            appendMessage(size: bodySize(sizes), to: &burst)
            pieces.append(Piece(length: burst.count - before, isMessage: true))
        }
    }

    private func isMessageBoundary(_ offset: Int, _ pieces: [Piece]) -> Bool {
        var at = 0
        for piece in pieces where piece.isMessage {
            if at == offset { return true }
            at += piece.length
        }
        return at == offset
    }

    /// Sends `bytes[captured]` in MSS-sized segments and records what the capture holds of it.
    private mutating func transmit(_ bytes: [UInt8], pieces: [Piece], captured: Range<Int>, flow index: Int, direction: Int) {
        // The first segment of a direction picked up mid-stream is never held back: a reader
        // picks a direction up at the first segment it sees.
        let isPickup = flows[index].beforeFirstBoundary[direction] && flows[index].captured[direction] == 0
        record(pieces, captured: captured, flow: index, direction: direction)
        var offset = captured.lowerBound
        while offset < captured.upperBound {
            let size = min(options.maximumSegmentSize, captured.upperBound - offset)
            let mayHold = !(isPickup && offset == captured.lowerBound)
            let f = flows[index]
            let (from, to) = direction == 0 ? (f.client, f.server) : (f.server, f.client)
            let packet = builder.tcp(
                from: from, to: to, sequence: f.sequence[direction], acknowledgment: f.sequence[1 - direction], flags: [.ack, .psh],
                payload: Array(bytes[offset..<(offset + size)]))
            flows[index].sequence[direction] &+= UInt32(size)
            offset += size
            let roll = Double(random.next() % 1_000_000) / 1_000_000
            if roll < options.outOfOrderFraction && flows[index].held.isEmpty && mayHold {
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
        guard !captured.isEmpty else { return }
        // The receiver acknowledges the burst.
        let f = flows[index]
        let (from, to) = direction == 0 ? (f.server, f.client) : (f.client, f.server)
        send(builder.tcp(from: from, to: to, sequence: f.sequence[1 - direction], acknowledgment: f.sequence[direction], flags: [.ack]))
    }

    /// What `analyze` must find in `captured` of a write laid out as `pieces`, cut into
    /// MSS-sized segments from its start: messages that start in the capture (partial: in two or
    /// more segments), a direction's leading tail, junk, a message cut by the end of the capture
    /// part; segments carrying two or more messages (the leading tail counts as one) are merged.
    private mutating func record(_ pieces: [Piece], captured: Range<Int>, flow index: Int, direction: Int) {
        guard !captured.isEmpty else { return }
        var t = truth.directions[Direction(rawValue: direction)!]
        let mss = options.maximumSegmentSize
        func segment(_ offset: Int) -> Int { (offset - captured.lowerBound) / mss }
        var touches: [Int: Int] = [:]
        var at = 0
        for piece in pieces {
            let start = at, isMessage = piece.isMessage
            at += piece.length
            let from = max(start, captured.lowerBound), to = min(at, captured.upperBound)
            guard from < to, !piece.isPreamble else { continue }
            if flows[index].beforeFirstBoundary[direction] && !(isMessage && start >= captured.lowerBound) {
                t.leadingBytes += to - from  // before the first boundary: the tail of an earlier write
                if isMessage { touches[segment(to - 1), default: 0] += 1 }
                continue
            }
            if start < captured.lowerBound || !isMessage {
                t.junkRegions += 1  // junk, or a message's tail at the start of a new connection
                t.junkBytes += to - from
                continue
            }
            flows[index].beforeFirstBoundary[direction] = false
            if at > captured.upperBound {
                t.incomplete += 1
                continue
            }
            t.messages += 1
            if segment(from) != segment(to - 1) { t.partial += 1 }
            for s in segment(from)...segment(to - 1) { touches[s, default: 0] += 1 }
            if recordsMessages {
                let f = flows[index]
                messages.append(
                    MessageTruth(
                        clientPort: f.client.port, direction: Direction(rawValue: direction)!,
                        offset: f.captured[direction] + from - captured.lowerBound, length: to - from))
            }
        }
        t.merged += touches.values.filter { $0 >= 2 }.count
        flows[index].captured[direction] += captured.count
        truth.directions[Direction(rawValue: direction)!] = t
        truth.messagesClientToServer = truth.directions.clientToServer.messages
        truth.messagesServerToClient = truth.directions.serverToClient.messages
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

    private mutating func appendJunk(to out: inout [UInt8]) {
        if case .lengthField(let d)? = options.spec?.kind, !d.magic.isEmpty {
            out.append(d.magic[0] &+ 1 &+ UInt8(random.next() % 255))  // never the magic's first byte
            for _ in 0..<(random.next() % 32) { out.append(UInt8(truncatingIfNeeded: random.next())) }
            return
        }
        switch options.framing {
        case _ where options.spec != nil, .varint:
            out += [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]  // 4294967295: far past any maximum
            for _ in 0..<(random.next() % 17) { out.append(UInt8(truncatingIfNeeded: random.next())) }
        case .length, .lines:
            out.append(UInt8(random.next() % 0xCA))  // never the magic's first byte
            for _ in 0..<(random.next() % 32) { out.append(UInt8(truncatingIfNeeded: random.next())) }
        }
    }

    /// Body sizes. Mixed: mostly 20–200 B, some up to 2 KiB, a few up to 64 KiB.
    private mutating func bodySize(_ sizes: Sizes) -> Int {
        func between(_ low: Int, _ high: Int) -> Int { low + Int(random.next() % UInt64(high - low + 1)) }
        switch sizes {
        case .mixed:
            let roll = random.next() % 100
            if roll < 85 { return between(20, 200) }
            if roll < 98 { return between(200, 2000) }
            return between(2000, 65_536)
        case .request: return between(20, 300)
        case .response: return random.next() % 4 == 0 ? between(300, 2048) : between(20, 300)
        case .bulk: return random.next() % 3 == 0 ? between(1000, 8192) : between(100, 1000)
        case .small: return between(5, 80)
        case .huge: return between(64 << 10, 1 << 20)
        }
    }

    private mutating func appendMessage(size: Int, to out: inout [UInt8]) {
        if specWriter != nil {
            specWriter!.append(bodySize: size, to: &out, text: text, random: &random)
            return
        }
        let start = Int(random.next() % UInt64(text.count - size))
        switch options.framing {
        case .varint where options.bodies == .random:
            out.appendVarint(size)
            out += noise[start..<(start + size)]
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
