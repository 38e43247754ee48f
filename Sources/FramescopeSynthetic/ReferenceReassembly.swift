import FramescopeCore

/// A deliberately simple reassembler: the oracle FlowTable's reassembly is compared with, byte
/// for byte (FuzzReassembly on every input, ReferenceReassemblyTests on the committed corpus).
///
/// One dictionary entry per byte, no buffers and no limits, so it is only right where no limit
/// applies. The rules are the ones the README states, as tshark's "follow TCP stream" has them:
/// - a direction's stream starts after its SYN, else at the first segment with data (or a FIN);
///   a later SYN moves the start only while nothing has flowed;
/// - a byte seen first wins over later copies, except that bytes arriving in order are delivered
///   as they come (tshark appends in-order data and trims what it had buffered);
/// - bytes a snaplen cut off are seen too, as missing: they become gap bytes;
/// - what is never seen before the end becomes gap bytes between what was;
/// - a SYN without ACK on a known 4-tuple opens a new connection unless it repeats the opening
///   SYN of the client.
public struct ReferenceReassembly {
    /// A direction's stream: runs of bytes and of gap bytes, adjacent runs of a kind merged, so
    /// that equal streams are equal values (and a gap of 2 GB costs nothing).
    public struct Stream: Equatable, CustomStringConvertible {
        public enum Run: Equatable {
            case bytes([UInt8])
            case gap(Int64)
        }
        public private(set) var runs: [Run] = []
        public private(set) var count: Int64 = 0

        public init() {}

        public mutating func append(_ byte: UInt8?) {
            if let byte { append(bytes: CollectionOfOne(byte)) } else { append(gap: 1) }
        }

        public mutating func append(bytes: some Collection<UInt8>) {
            guard !bytes.isEmpty else { return }
            count += Int64(bytes.count)
            if case .bytes(var last) = runs.last {
                runs.removeLast()  // so that `last` is the only reference and grows in place
                last.append(contentsOf: bytes)
                runs.append(.bytes(last))
            } else {
                runs.append(.bytes(Array(bytes)))
            }
        }

        public mutating func append(gap length: Int64) {
            guard length > 0 else { return }
            count += length
            if case .gap(let last) = runs.last { runs[runs.count - 1] = .gap(last + length) } else { runs.append(.gap(length)) }
        }

        public var description: String {
            runs.map { run in
                switch run {
                case .bytes(let b): "\(b.count) bytes [\(b.prefix(8).map { String($0) }.joined(separator: " "))\(b.count > 8 ? " …" : "")]"
                case .gap(let n): "gap of \(n)"
                }
            }.joined(separator: ", ")
        }
    }

    public struct Key: Hashable, Comparable, CustomStringConvertible {
        public var connection: Int
        public var direction: Direction
        public static func < (a: Key, b: Key) -> Bool { (a.connection, a.direction.rawValue) < (b.connection, b.direction.rawValue) }
        public var description: String { "connection \(connection) \(direction)" }
    }

    private struct Half {
        var started = false
        var base: UInt32 = 0
        var frontier: Int64 = 0
        var payloadPackets = 0
        var stream = Stream()
        /// Out-of-order bytes by stream offset (nil: a byte the snaplen cut off).
        var pending: [Int64: UInt8?] = [:]
        /// The copy kept of each captured byte (delivered or pending), and where a later copy
        /// differed from it.
        var known: [Int64: UInt8] = [:]
        var differing: Set<Int64> = []

        func offset(of sequence: UInt32) -> Int64 {
            frontier + Int64(Int32(bitPattern: sequence &- (base &+ UInt32(truncatingIfNeeded: frontier))))
        }

        mutating func receive(sequence: UInt32, flags: TCPFlags, values: [UInt8?]) {
            var sequence = sequence
            if flags.contains(.syn) {
                if !started || (frontier == 0 && pending.isEmpty && payloadPackets == 0) {
                    base = sequence &+ 1
                    started = true
                }
                sequence = sequence &+ 1
            }
            if !started {
                guard !values.isEmpty || flags.contains(.fin) else { return }
                base = sequence
                started = true
            }
            guard !values.isEmpty else { return }
            payloadPackets += 1
            let start = offset(of: sequence), end = start + Int64(values.count)
            // A keep-alive probe: one byte (or none) just below the next, neither data nor a conflict.
            let captured = values.lazy.filter { $0 != nil }.count
            if captured <= 1 && end == frontier && !flags.contains(.syn) && !flags.contains(.fin) { return }
            for (i, value) in values.enumerated() {
                if let value, let kept = known[start + Int64(i)], kept != value { differing.insert(start + Int64(i)) }
            }
            place(values, at: start)
        }

        private mutating func place(_ values: [UInt8?], at start: Int64) {
            let end = start + Int64(values.count)
            if end <= frontier { return }  // a copy of delivered bytes
            if start > frontier {
                for (i, value) in values.enumerated() where pending.index(forKey: start + Int64(i)) == nil {
                    pending[start + Int64(i)] = value
                    if let value { known[start + Int64(i)] = value }
                }
                return
            }
            for o in frontier..<end {
                let value = values[Int(o - start)]
                stream.append(value)
                known[o] = value  // in order, it is what is kept
            }
            frontier = end
            drain()
        }

        private mutating func drain() {
            while let value = pending[frontier] {
                stream.append(value)
                frontier += 1
            }
            if !pending.isEmpty { pending = pending.filter { $0.key >= frontier } }
        }

        /// Every hole left is a gap up to the next byte held.
        mutating func finish() {
            while let next = pending.keys.min() {
                stream.append(gap: next - frontier)
                frontier = next
                drain()
            }
        }
    }

    private struct Connection {
        var id: Int
        var client: Endpoint
        var clientSequence: UInt32?
        var halves = [Half(), Half()]
    }

    private var open: [Set<Endpoint>: Connection] = [:]
    private var nextID = 0
    /// Streams of finished connections, and of open ones once `finish()` ran.
    public private(set) var streams: [Key: Stream] = [:]
    /// Where a later copy of a byte differed from the one kept, by direction.
    public private(set) var differing: [Key: Set<Int64>] = [:]

    public init() {}

    /// `missing` bytes after the payload were cut off by the snaplen.
    public mutating func receive(source: Endpoint, destination: Endpoint, sequence: UInt32, flags: TCPFlags, payload: [UInt8], missing: Int = 0) {
        let tuple: Set = [source, destination]
        let opening = flags.contains(.syn) && !flags.contains(.ack)
        if var connection = open[tuple], opening, connection.client != source || connection.clientSequence != sequence {
            retire(&connection)
            open[tuple] = nil
        }
        if open[tuple] == nil {
            let client: Endpoint
            if flags.contains(.syn) {
                client = flags.contains(.ack) ? destination : source
            } else {
                client = source.port < destination.port ? destination : source
            }
            open[tuple] = Connection(id: nextID, client: client, clientSequence: opening ? sequence : nil)
            nextID += 1
        }
        let values = payload.map { Optional($0) } + repeatElement(nil, count: missing)
        let direction = source == open[tuple]!.client ? 0 : 1
        open[tuple]!.halves[direction].receive(sequence: sequence, flags: flags, values: values)
    }

    /// Ends every open connection: holes become gaps.
    public mutating func finish() {
        for (_, var connection) in open { retire(&connection) }
        open = [:]
    }

    private mutating func retire(_ connection: inout Connection) {
        for direction in Direction.allCases {
            connection.halves[direction.rawValue].finish()
            let stream = connection.halves[direction.rawValue].stream
            let key = Key(connection: connection.id, direction: direction)
            if stream.count > 0 { streams[key] = stream }
            if !connection.halves[direction.rawValue].differing.isEmpty { differing[key] = connection.halves[direction.rawValue].differing }
        }
    }
}

/// Records what a flow table delivers in the reference model's terms: per connection and
/// direction, the stream with gap bytes as nil.
public struct StreamRecorder: StatelessStreamSink {
    public typealias Stream = ReferenceReassembly.Stream
    public private(set) var streams: [ReferenceReassembly.Key: ReferenceReassembly.Stream] = [:]
    /// Conflicts reported, by direction: where and how long.
    public private(set) var conflicts: [ReferenceReassembly.Key: [(offset: Int64, length: Int64)]] = [:]

    public init() {}

    public mutating func data(_ chunk: StreamChunk) {
        let key = ReferenceReassembly.Key(connection: chunk.connection.rawValue, direction: chunk.direction)
        precondition(streams[key, default: Stream()].count == chunk.offset, "\(key): data at \(chunk.offset) after \(streams[key, default: Stream()].count) bytes")
        streams[key, default: Stream()].append(bytes: chunk.bytes)
    }

    public mutating func gap(_ gap: StreamGap) {
        let key = ReferenceReassembly.Key(connection: gap.connection.rawValue, direction: gap.direction)
        precondition(streams[key, default: Stream()].count == gap.offset, "\(key): gap at \(gap.offset) after \(streams[key, default: Stream()].count) bytes")
        streams[key, default: Stream()].append(gap: gap.length)
    }

    public mutating func conflict(_ conflict: StreamConflict) {
        conflicts[ReferenceReassembly.Key(connection: conflict.connection.rawValue, direction: conflict.direction), default: []]
            .append((conflict.offset, conflict.length))
    }
    public mutating func connectionClosed(_ summary: ConnectionSummary) {}
}

/// The first difference between two sets of streams, described; nil when they are equal.
public func firstDifference(
    _ expected: [ReferenceReassembly.Key: ReferenceReassembly.Stream], _ actual: [ReferenceReassembly.Key: ReferenceReassembly.Stream]
) -> String? {
    for key in Set(expected.keys).union(actual.keys).sorted() {
        let e = expected[key] ?? .init(), a = actual[key] ?? .init()
        if e != a { return "\(key): model \(e), flow table \(a)" }
    }
    return nil
}

/// Segments among three endpoints described by arbitrary bytes (FuzzReassembly's input): each
/// record is [control][sequence delta, 2 bytes][length] and `length` payload bytes. Control:
/// bits 7–6 the endpoint pair, 5 the reverse direction, 4 SYN (bit 0 clear: without ACK),
/// 3 FIN, 2 RST, 1 six more bytes cut off by the snaplen, 1–0 which of four sequence counters
/// the delta moves.
public struct ReassemblyScript {
    public struct Step: CustomStringConvertible {
        public var source: Endpoint
        public var destination: Endpoint
        public var sequence: UInt32
        public var flags: TCPFlags
        public var payload: [UInt8]
        public var missing: Int

        public init(source: Endpoint, destination: Endpoint, sequence: UInt32, flags: TCPFlags, payload: [UInt8], missing: Int = 0) {
            (self.source, self.destination, self.sequence, self.flags, self.payload, self.missing) =
                (source, destination, sequence, flags, payload, missing)
        }

        public var description: String {
            "\(source) > \(destination) seq \(sequence) \(flags) payload \(payload)\(missing > 0 ? " + \(missing) cut off" : "")"
        }
    }

    public private(set) var steps: [Step] = []
    static let endpoints = [Endpoint("10.0.0.1:1000")!, Endpoint("10.0.0.2:80")!, Endpoint("10.0.0.3:2000")!]

    public init(steps: [Step]) { self.steps = steps }

    public init(_ bytes: some Collection<UInt8>) {
        var input = Array(bytes)[...]
        var sequence: [UInt32] = [0xFFFF_FF00, 0x7FFF_FFF0, 0, 1 << 31]
        while input.count >= 4 {
            let control = input[input.startIndex], length = Int(input[input.startIndex + 3])
            let delta = Int16(bitPattern: UInt16(input[input.startIndex + 1]) << 8 | UInt16(input[input.startIndex + 2]))
            input = input.dropFirst(4)
            let payload = Array(input.prefix(length))
            input = input.dropFirst(payload.count)
            let pair = Int(control >> 6) % 3
            let (a, b) = (Self.endpoints[pair], Self.endpoints[(pair + 1) % 3])
            let reverse = control & 0x20 != 0
            let counter = Int(control & 3)
            sequence[counter] = sequence[counter] &+ UInt32(bitPattern: Int32(delta))
            var flags: TCPFlags = [.ack]
            if control & 0x10 != 0 { flags.insert(.syn) }
            if control & 0x08 != 0 { flags.insert(.fin) }
            if control & 0x04 != 0 { flags.insert(.rst) }
            if flags.contains(.syn) && control & 0x01 == 0 { flags.remove(.ack) }
            steps.append(
                Step(
                    source: reverse ? b : a, destination: reverse ? a : b, sequence: sequence[counter], flags: flags, payload: payload,
                    missing: Int(control & 0x02) * 3))
        }
    }

    /// The flow table's streams for this script, with `options`; all segments at one instant
    /// unless `secondsPerStep` spaces them (timeouts then apply).
    public func reassemble(options: ReassemblyOptions, secondsPerStep: Int64 = 0) -> (table: FlowTable<StreamRecorder>, streams: [ReferenceReassembly.Key: ReferenceReassembly.Stream]) {
        var table = FlowTable(sink: StreamRecorder(), options: options)
        feed(&table, secondsPerStep: secondsPerStep)
        return (table, table.sink.streams)
    }

    /// Feeds the steps to `table` (step i is frame i + 1, at `firstSecond + i × secondsPerStep`)
    /// and finishes it; returns the most out-of-order bytes the table held between two packets
    /// (what the buffer limits bound; the report's peak sums the groups' peaks).
    @discardableResult
    public func feed<Sink: StreamSink>(_ table: inout FlowTable<Sink>, firstSecond: Int64 = 0, secondsPerStep: Int64 = 0) -> Int {
        var held = 0
        for (i, step) in steps.enumerated() {
            step.payload.withUnsafeBytes { bytes in
                let segment = TCPSegment(
                    source: step.source, destination: step.destination, sequence: step.sequence, flags: step.flags, payload: bytes,
                    missingPayload: step.missing)
                let time = Timestamp(seconds: firstSecond + Int64(i) * secondsPerStep, nanoseconds: 0)
                table.receive(segment, frame: UInt64(i + 1), timestamp: time)
            }
            held = max(held, table.context.bufferedBytes)
        }
        table.finish()
        return held
    }

    /// Limits small enough for the fuzzer's scripts to reach (FuzzReassembly's second pass, where
    /// invariants are checked instead of the model).
    public static var smallLimits: ReassemblyOptions {
        var options = ReassemblyOptions()
        options.maxBufferedBytesPerDirection = 2048
        options.maxBufferedBytesTotal = 4096
        options.maxConnections = 3
        options.conflictWindow = 64
        return options
    }

    /// The reference model after this script.
    public var reference: ReferenceReassembly {
        var model = ReferenceReassembly()
        for step in steps {
            model.receive(
                source: step.source, destination: step.destination, sequence: step.sequence, flags: step.flags, payload: step.payload,
                missing: step.missing)
        }
        model.finish()
        return model
    }

    /// Limits the model has none of: no buffer limit is reached and every delivered byte stays
    /// in the conflict window (for scripts of up to 64 KiB of payload, what the fuzzer makes).
    public static var unlimited: ReassemblyOptions {
        var options = ReassemblyOptions()
        options.conflictWindow = 1 << 16
        options.maxConflictWindowBytesTotal = 1 << 40
        return options
    }

    /// Where the flow table (without limits) and the model disagree, described; nil when they
    /// agree: every direction's stream byte for byte, gaps included; every conflict the table
    /// reports covers a byte that differed from the copy kept; and in a direction without gaps
    /// (where the conflict window forgets nothing) every such byte is in a reported conflict.
    public func disagreement() -> String? {
        let model = reference
        let table = reassemble(options: Self.unlimited).table.sink
        if let difference = firstDifference(model.streams, table.streams) { return difference }
        for (key, conflicts) in table.conflicts.sorted(by: { $0.key < $1.key }) {
            let differing = model.differing[key] ?? []
            for c in conflicts where !(c.offset..<c.offset + c.length).contains(where: differing.contains) {
                return "\(key): conflict reported at \(c.offset) (\(c.length) bytes) where every byte matched the copy kept"
            }
        }
        for (key, differing) in model.differing.sorted(by: { $0.key < $1.key }) {
            guard let stream = model.streams[key], !stream.runs.contains(where: { if case .gap = $0 { true } else { false } }) else { continue }
            let reported = table.conflicts[key] ?? []
            if let missed = differing.sorted().first(where: { o in !reported.contains { $0.offset <= o && o < $0.offset + $0.length } }) {
                return "\(key): the byte at \(missed) differed from the copy kept, and no conflict covers it"
            }
        }
        return nil
    }
}
