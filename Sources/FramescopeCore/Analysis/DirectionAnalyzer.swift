/// Cuts one direction's reassembled stream into messages and relates them to the segments
/// that carried them.
///
/// Only frame headers are buffered (at most the dissector's `headerLength` bytes, or the
/// delimiter's length for delimiter framing); bodies are skipped by counting, so a claimed
/// length is never allocated. After a malformed header or a gap the analyzer resynchronises:
/// it keeps up to `resyncWindow` bytes and looks for an offset where two consecutive frames
/// decode (with a magic, only where the magic matches; with delimiters, right after one).
struct DirectionAnalyzer {
    static let resyncWindow = 64 << 10

    private(set) var analysis = DirectionAnalysis()
    private var dissector: AnyDissector
    private let connection: ConnectionID
    private let direction: Direction

    private enum Mode: Equatable {
        case framing
        case body(remaining: Int64)
        case resync
        case stopped
    }

    private var mode = Mode.framing
    /// Bytes of the current frame's start, not yet decided on.
    private var header: [UInt8] = []
    /// Bytes of the current frame already scanned and dropped (delimiter framing).
    private var consumed = 0

    private struct Message {
        var start: Int64
        var firstFrame: UInt64
        var firstTimestamp: Timestamp
        var segments = 1
        var atSegmentStart: Bool
        var type: UInt64?
        var isPreamble = false
        var damaged = false
    }

    private var message: Message?

    private struct Segment: Equatable {
        var start: Int64
        var frame: UInt64
        var timestamp: Timestamp
        var touches = 0
    }

    private var segment: Segment?
    /// Touch counts of earlier segments the message in progress spans: final once it
    /// completes (each gets +1) or turns out not to be a message.
    private var spanned: [(touches: Int, timestamp: Timestamp)] = []
    /// Stream offset one past the last byte seen.
    private var end: Int64 = 0

    /// Resynchronisation: bytes from `windowStart`, and where each segment's part begins.
    private var window: [UInt8] = []
    private var windowStart: Int64 = 0
    private var windowSegments: [(at: Int, segment: Segment)] = []
    private var nextCandidate = 0

    /// The protobuf check of message bodies, when one applies.
    /// Not optional, so the hot path reads `inspection.active` without copying the struct.
    private var inspection: BodyInspection
    private let checksBodies: Bool

    init(dissector: AnyDissector, connection: ConnectionID, direction: Direction, protobuf: ProtobufCheck? = nil) {
        self.dissector = dissector
        self.connection = connection
        self.direction = direction
        inspection = BodyInspection(schema: protobuf?.schema)
        checksBodies = protobuf != nil
    }

    // MARK: Input

    mutating func feed(_ chunk: StreamChunk, log: inout AnalysisLog) {
        end = chunk.offset + Int64(chunk.bytes.count)
        feedPart(chunk.bytes, at: chunk.offset, segment: Segment(start: chunk.offset, frame: chunk.frame, timestamp: chunk.timestamp), log: &log)
        resynchronize(log: &log)
    }

    /// Bytes never captured: the message they fall in is damaged; framing resumes after them
    /// if the message's end is known, else by resynchronising.
    mutating func gap(at offset: Int64, length: Int64, log: inout AnalysisLog) {
        end = offset + length
        switch mode {
        case .stopped:
            return
        case .body(let remaining) where remaining >= length:
            markDamaged(length: length, log: &log)
            if remaining == length {
                settleSpanned(touched: false)
                message = nil
                mode = .framing
            } else {
                mode = .body(remaining: remaining - length)
            }
            return
        case .resync:
            analysis.undissectedBytes += Int64(window.count)
            log.resyncWindowBytes -= window.count
            window = []
        case .framing, .body:
            if message != nil {
                markDamaged(length: length, log: &log)
                settleSpanned(touched: false)
                message = nil
            }
            analysis.undissectedBytes += Int64(consumed)
        }
        startResync(at: offset + length, keeping: [], candidateFrom: 0, log: &log)
    }

    /// End of the direction (FIN, RST, end of capture): a message still open is incomplete.
    mutating func finish(log: inout AnalysisLog) {
        switch mode {
        case .resync:
            analysis.undissectedBytes += Int64(window.count)
            log.resyncWindowBytes -= window.count
            window = []
        case .framing, .body:
            if let m = message, !m.damaged {
                analysis.incompleteAtEnd += 1
                analysis.incompleteBytes += end - m.start
                log.add(
                    AnalysisEvent(
                        kind: .incompleteAtEnd, reason: nil, connection: connection, direction: direction, offset: m.start,
                        frame: m.firstFrame, timestamp: m.firstTimestamp, bytes: Array(header.prefix(16)), length: end - m.start))
            }
        case .stopped:
            break
        }
        inspection.abandon()
        message = nil
        finishSegment()
    }

    // MARK: Framing

    private mutating func feedPart(_ bytes: UnsafeRawBufferPointer, at offset: Int64, segment part: Segment, log: inout AnalysisLog) {
        if mode == .resync {
            appendToWindow(bytes, segment: part, log: &log)
        } else {
            enterSegment(part)
            process(bytes, at: offset, log: &log)
        }
    }

    private mutating func process(_ bytes: UnsafeRawBufferPointer, at base: Int64, log: inout AnalysisLog) {
        var i = 0
        while i < bytes.count {
            switch mode {
            case .stopped:
                analysis.undissectedBytes += Int64(bytes.count - i)
                return
            case .resync:
                appendToWindow(bytes.dropFirst(i), segment: segment!, log: &log)
                return
            case .body(let remaining):
                let n = Int(min(remaining, Int64(bytes.count - i)))
                if inspection.active { inspection.feed(bytes.slice(from: i, count: n), at: base + Int64(i), frame: segment!.frame) }
                i += n
                if Int64(n) == remaining {
                    mode = .framing
                    completeFrame(endingAt: base + Int64(i), log: &log)
                } else {
                    mode = .body(remaining: remaining - Int64(n))
                }
            case .framing:
                if message == nil { beginFrame(at: base + Int64(i)) }
                let available = bytes.count - i
                if header.isEmpty {
                    let step = dissector.decode(bytes.dropFirst(i), consumed: consumed)
                    i = apply(step, prior: 0, taken: available, bytes: bytes, at: i, base: base, log: &log)
                } else {
                    let prior = header.count
                    let room = dissector.headerLength == .max ? available : max(0, dissector.headerLength - prior)
                    let taken = min(available, room)
                    header.append(contentsOf: bytes[i..<(i + taken)])
                    let step = header.withUnsafeBytes { dissector.decode($0, consumed: consumed) }
                    i = apply(step, prior: prior, taken: taken, bytes: bytes, at: i, base: base, log: &log)
                }
            }
        }
    }

    /// Acts on a decode step; returns the new position in `bytes`. The decoded input was
    /// `prior` buffered bytes followed by `taken` bytes of `bytes` from `i`.
    private mutating func apply(
        _ step: DecodeStep, prior: Int, taken: Int, bytes: UnsafeRawBufferPointer, at i: Int, base: Int64, log: inout AnalysisLog
    ) -> Int {
        switch step {
        case .frame(let length, let type, let body):
            message?.type = type
            if checksBodies && !message!.isPreamble {
                // A frame wholly in this chunk is checked at once; else as its bytes pass.
                if prior == 0 && consumed == 0 && length <= bytes.count - i {
                    inspection.checkWhole(bytes.slice(from: i + body, count: length - body), start: message!.start + Int64(body), frame: segment!.frame)
                } else {
                    beginBody(at: body, length: length, prior: prior)
                }
            }
            return frameDecided(length: length, prior: prior, bytes: bytes, at: i, base: base, log: &log)
        case .preamble(let length):
            message?.isPreamble = true
            return frameDecided(length: length, prior: prior, bytes: bytes, at: i, base: base, log: &log)
        case .needMoreData(let scanned):
            consumed += scanned
            if prior == 0 && header.isEmpty {
                header.append(contentsOf: bytes[(i + scanned)...])
            } else {
                header.removeFirst(min(scanned, header.count))
            }
            precondition(taken > 0 || bytes.count == i, "dissector needs more than its headerLength")
            return i + taken
        case .malformed(let reason):
            let frameStart = message!.start
            var evidence = Array(header.prefix(prior))
            evidence += bytes[i..<min(bytes.count, i + 16)]
            analysis.malformed += 1
            analysis.malformedByReason[reason, default: 0] += 1
            analysis.timeline.add(.malformed, at: message!.firstTimestamp)
            log.add(
                AnalysisEvent(
                    kind: .malformed, reason: reason, connection: connection, direction: direction, offset: frameStart + Int64(consumed),
                    frame: message!.firstFrame, timestamp: message!.firstTimestamp, bytes: Array(evidence.prefix(16)), length: 0))
            settleSpanned(touched: false)
            message = nil
            analysis.undissectedBytes += Int64(consumed)
            let kept = Array(header.prefix(prior))
            startResync(at: frameStart + Int64(consumed), keeping: kept, candidateFrom: 1, log: &log)
            appendToWindow(bytes.dropFirst(i), segment: segment!, log: &log)
            return bytes.count
        }
    }

    private mutating func frameDecided(
        length: Int, prior: Int, bytes: UnsafeRawBufferPointer, at i: Int, base: Int64, log: inout AnalysisLog
    ) -> Int {
        let inChunk = Int64(length - consumed - prior)
        precondition(inChunk >= 0, "a frame shorter than the bytes it was decided on")
        if !header.isEmpty { header.removeAll(keepingCapacity: true) }
        consumed = 0
        let available = Int64(bytes.count - i)
        if inspection.active {
            inspection.feed(bytes.slice(from: i, count: Int(min(inChunk, available))), at: base + Int64(i), frame: segment!.frame)
        }
        if inChunk <= available {
            let next = i + Int(inChunk)
            completeFrame(endingAt: base + Int64(next), log: &log)
            return next
        }
        mode = .body(remaining: inChunk - available)
        return bytes.count
    }

    // MARK: Bodies

    /// Starts the protobuf check of the frame just decided, with the `prior` header bytes
    /// buffered before this chunk (the chunk's own bytes follow in `frameDecided`).
    private mutating func beginBody(at body: Int, length: Int, prior: Int) {
        guard let m = message else { return }
        inspection.begin(start: m.start + Int64(body), end: m.start + Int64(length))
        if prior > 0 {
            header.withUnsafeBytes { inspection.feed($0.slice(from: 0, count: prior), at: m.start + Int64(consumed), frame: m.firstFrame) }
        }
    }

    private mutating func finishBody(log: inout AnalysisLog) {
        guard inspection.isPending else { return }
        let (failure, counted) = inspection.finish(frame: segment!.frame)
        analysis.protobufChecked += 1
        guard let failure else {
            analysis.countedValues.add(counted)
            return
        }
        analysis.protobufInvalid += 1
        analysis.protobufInvalidByReason[failure.reason, default: 0] += 1
        log.add(
            AnalysisEvent(
                kind: .invalidProtobuf, reason: nil,
                protobufFailure: ProtobufFailureSite(reason: failure.reason, offset: inspection.bodyStart + failure.at, frame: inspection.failureFrame),
                connection: connection, direction: direction, offset: inspection.bodyStart,
                frame: inspection.prefix.isEmpty ? segment!.frame : inspection.startFrame, timestamp: segment!.timestamp,
                bytes: inspection.prefix.bytes, length: inspection.bodyLength))
    }

    // MARK: Messages and segments

    private mutating func beginFrame(at offset: Int64) {
        let s = segment!
        message = Message(start: offset, firstFrame: s.frame, firstTimestamp: s.timestamp, atSegmentStart: offset == s.start)
    }

    /// Settles the segments the frame in progress spans: touched if it was a message.
    private mutating func settleSpanned(touched: Bool) {
        if touched { segment!.touches += 1 }
        for s in spanned { recordSegment(touches: s.touches + (touched ? 1 : 0), at: s.timestamp) }
        spanned.removeAll(keepingCapacity: true)
    }

    private mutating func completeFrame(endingAt end: Int64, log: inout AnalysisLog) {
        guard let m = message else { return }
        message = nil
        if !m.damaged { finishBody(log: &log) }
        guard !m.isPreamble && !m.damaged else {
            settleSpanned(touched: false)
            if m.isPreamble { analysis.preambleBytes += end - m.start }
            return
        }
        settleSpanned(touched: true)
        let length = end - m.start
        analysis.messages += 1
        analysis.messageBytes += length
        analysis.sizes.add(length)
        log.sizes[direction.rawValue].add(length)
        if let type = m.type { analysis.countType(type) }
        analysis.segmentsPerMessage.add(m.segments)
        if m.segments >= 2 {
            analysis.partialMessages += 1
            analysis.timeline.add(.partial, at: segment!.timestamp)
        }
        if !(m.atSegmentStart && m.segments == 1) { analysis.naiveReaderLoss += 1 }
        let latency = (segment!.timestamp.nanoseconds - m.firstTimestamp.nanoseconds) / 1000
        analysis.assemblyLatencyMicroseconds.add(latency)
        log.latencies[direction.rawValue].add(latency)
        if log.recordMessages {
            log.messages.append(
                MessageRecord(
                    connection: connection, direction: direction, offset: m.start, length: length, type: m.type,
                    firstFrame: m.firstFrame, lastFrame: segment!.frame, segments: m.segments,
                    firstTimestamp: m.firstTimestamp, lastTimestamp: segment!.timestamp, damagedByGap: false))
        }
    }

    private mutating func markDamaged(length: Int64, log: inout AnalysisLog) {
        inspection.abandon()
        guard var m = message, !m.damaged, !m.isPreamble else { return }
        m.damaged = true
        message = m
        analysis.damagedByGaps += 1
        log.add(
            AnalysisEvent(
                kind: .damagedByGap, reason: nil, connection: connection, direction: direction, offset: m.start,
                frame: m.firstFrame, timestamp: m.firstTimestamp, bytes: [], length: length))
    }

    private mutating func enterSegment(_ s: Segment) {
        if let current = segment, current.start == s.start && current.frame == s.frame { return }
        if let current = segment, message != nil {
            spanned.append((current.touches, current.timestamp))
            message!.segments += 1
        } else {
            finishSegment()
        }
        segment = s
    }

    /// Settles what is still open (at the end, or when framing stops for good).
    private mutating func finishSegment() {
        settleSpanned(touched: false)
        if let s = segment { recordSegment(touches: s.touches, at: s.timestamp) }
        segment = nil
    }

    private mutating func recordSegment(touches: Int, at time: Timestamp) {
        if touches > 0 { analysis.messagesPerSegment.add(touches) }
        if touches >= 2 {
            analysis.mergedSegments += 1
            analysis.timeline.add(.merged, at: time)
        }
    }

    // MARK: Resynchronisation

    private mutating func startResync(at offset: Int64, keeping bytes: [UInt8], candidateFrom: Int, log: inout AnalysisLog) {
        mode = .resync
        log.resyncWindowBytes += bytes.count
        header.removeAll(keepingCapacity: true)
        consumed = 0
        dissector.reset()
        window = bytes
        windowStart = offset
        windowSegments = bytes.isEmpty ? [] : [(0, segment ?? Segment(start: offset, frame: 0, timestamp: .zero))]
        nextCandidate = candidateFrom
    }

    private mutating func appendToWindow(_ bytes: UnsafeRawBufferPointer, segment s: Segment, log: inout AnalysisLog) {
        guard !bytes.isEmpty else { return }
        var room = Self.resyncWindow - window.count
        if log.resyncWindowBytes + min(room, bytes.count) > log.maxResyncWindowBytes {
            room = max(0, log.maxResyncWindowBytes - log.resyncWindowBytes)
            if room == 0 {
                log.resyncBudgetExhausted += 1
                analysis.undissectedBytes += Int64(bytes.count)
                giveUp(log: &log)
                return
            }
        }
        log.resyncWindowBytes += min(room, bytes.count)
        if let last = windowSegments.last?.segment, last.start == s.start && last.frame == s.frame {
        } else {
            windowSegments.append((window.count, s))
        }
        window.append(contentsOf: bytes.prefix(room))
        if bytes.count > room { analysis.undissectedBytes += Int64(bytes.count - room) }
    }

    /// Looks for a place where framing can start again; replays the window from there.
    private mutating func resynchronize(log: inout AnalysisLog) {
        while mode == .resync {
            guard let found = findCandidate() else {
                if window.count >= Self.resyncWindow { giveUp(log: &log) }
                return
            }
            analysis.resyncs += 1
            analysis.undissectedBytes += Int64(found)
            log.add(
                AnalysisEvent(
                    kind: .resynchronized, reason: nil, connection: connection, direction: direction, offset: windowStart,
                    frame: windowSegments.first?.segment.frame ?? 0, timestamp: windowSegments.first?.segment.timestamp ?? .zero,
                    bytes: Array(window.prefix(16)), length: Int64(found)))
            let (bytes, parts, start) = (window, windowSegments, windowStart)
            log.resyncWindowBytes -= window.count
            window = []
            windowSegments = []
            mode = .framing
            bytes.withUnsafeBytes { all in
                for (k, part) in parts.enumerated() {
                    let from = max(part.at, found), to = k + 1 < parts.count ? parts[k + 1].at : all.count
                    guard from < to else { continue }
                    feedPart(all.slice(from: from, count: to - from), at: start + Int64(from), segment: part.segment, log: &log)
                }
            }
        }
    }

    /// The first window offset from `nextCandidate` where framing plausibly starts again.
    private mutating func findCandidate() -> Int? {
        var scratch = dissector
        scratch.reset()
        return window.withUnsafeBytes { w -> Int? in
            if let delimiter = dissector.delimiter {
                // Delimiter framing starts again right after the next delimiter.
                var i = max(nextCandidate, delimiter.count)
                while i <= w.count {
                    var matches = true
                    for k in 0..<delimiter.count where w[i - delimiter.count + k] != delimiter[k] { matches = false }
                    if matches { return i }
                    i += 1
                }
                nextCandidate = max(nextCandidate, w.count - delimiter.count + 1)
                return nil
            }
            while nextCandidate < w.count {
                let o = nextCandidate
                switch scratch.decode(w.dropFirst(o), consumed: 0) {
                case .needMoreData:
                    return nil
                case .malformed:
                    nextCandidate += 1
                case .frame(let first, _, _), .preamble(let first):
                    if o + first >= Self.resyncWindow {  // cannot be checked within the window
                        nextCandidate += 1
                        continue
                    }
                    if o + first >= w.count { return nil }
                    switch scratch.decode(w.dropFirst(o + first), consumed: 0) {
                    case .frame, .preamble: return o
                    case .needMoreData: return nil
                    case .malformed: nextCandidate += 1
                    }
                }
            }
            return nil
        }
    }

    private mutating func giveUp(log: inout AnalysisLog) {
        analysis.stopped = true
        analysis.undissectedBytes += Int64(window.count)
        log.resyncWindowBytes -= window.count
        log.add(
            AnalysisEvent(
                kind: .gaveUp, reason: nil, connection: connection, direction: direction, offset: windowStart,
                frame: windowSegments.first?.segment.frame ?? 0, timestamp: windowSegments.first?.segment.timestamp ?? .zero,
                bytes: Array(window.prefix(16)), length: Int64(window.count)))
        window = []
        windowSegments = []
        mode = .stopped
    }
}

/// Events kept for the report (the first `limit`), and how many there were.
public struct AnalysisLog: Sendable {
    public static let limit = 10_000
    public private(set) var events: [AnalysisEvent] = []
    public private(set) var total = 0
    /// Message sizes and assembly latencies (µs) of all connections, per direction, at fine
    /// precision (1/64); the per-direction histograms are coarse.
    public internal(set) var sizes = [QuantileHistogram(bits: 6), QuantileHistogram(bits: 6)]
    public internal(set) var latencies = [QuantileHistogram(bits: 6), QuantileHistogram(bits: 6)]
    /// Bytes held in resynchronisation windows now, all directions, and the most allowed:
    /// past it a direction that needs a window gives up instead (`resyncBudgetExhausted`).
    public internal(set) var resyncWindowBytes = 0
    public var maxResyncWindowBytes = 32 << 20
    public internal(set) var resyncBudgetExhausted = 0
    /// Messages completed since the last delivery, when `recordMessages` is set.
    var messages: [MessageRecord] = []
    var recordMessages = false

    public init() {}

    mutating func add(_ event: AnalysisEvent) {
        total += 1
        if events.count < Self.limit { events.append(event) }
    }
}
