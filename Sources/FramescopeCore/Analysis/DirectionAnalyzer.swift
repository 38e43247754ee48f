/// Follows one direction's reassembled stream through framing: the cutter finds the frames,
/// the ledger relates them to the segments that carried them, the recovery finds where framing
/// starts again after a malformed header or a gap, and bodies are checked as they pass. This
/// type only routes between them and keeps the message in progress; the search for boundaries
/// is in DirectionAnalyzer+Recovery.swift. (State is internal for that file: nothing outside
/// the analyzer touches it.)
struct DirectionAnalyzer {
    var analysis = DirectionAnalysis()
    var cutter: FrameCutter
    var ledger = SegmentLedger()
    // The one-byte fields in the ledger's tail padding, before the aligned words: every direction
    // that carries bytes has an analyzer, and a byte more took its allocation (header and
    // malloc's word included) to the next 16-byte size.
    var mode = Mode.framing
    private let checksBodies: Bool
    private let direction: Direction
    private var hasUnsettledGlue = false
    /// Allocated at the first search: most directions never need one, and 50,000 open
    /// connections would carry 350 bytes each of it.
    private var recoveryState = OutOfLine<FramingRecovery>()
    var recovery: FramingRecovery {
        _read { yield recoveryState.value }
        _modify { yield &recoveryState.value }
    }
    /// The protobuf check of message bodies. Not optional, so the hot path reads
    /// `inspection.active` without copying the struct.
    private var inspection: BodyInspection
    let connection: ConnectionID

    enum Mode {
        case framing
        /// Looking for where framing starts again (`recovery` holds the bytes).
        case recovering
        /// Gave up: the rest of the stream is undissected.
        case stopped
    }

    /// The frame in progress. (The segment it began in is the ledger's: `messageFirstSegment`.)
    private struct Message {
        var start: Int64
        var type: UInt64?
        var isPreamble = false
        var damaged = false
        /// Its first segment carried a message before it: the two are glued.
        var sharesFirstSegment = false
    }

    private var message: Message?
    /// Stream offset one past the last byte seen.
    private var end: Int64 = 0
    /// The type of the last message completed, while the segment it ended in may still carry
    /// the next message (which glues it) and it was not counted glued already: a flag and a
    /// number (an optional's tag byte after the number took 8 bytes more).
    private var unsettledGlue: UInt64? {
        get { hasUnsettledGlue ? unsettledType : nil }
        set {
            hasUnsettledGlue = newValue != nil
            unsettledType = newValue ?? 0
        }
    }
    private var unsettledType: UInt64 = 0

    /// - Parameter bodyRules: what bodies are checked against, nil when they are not checked.
    init(dissector: SharedDissector, connection: ConnectionID, direction: Direction, bodyRules: BodyRules?) {
        cutter = FrameCutter(dissector)
        self.connection = connection
        self.direction = direction
        inspection = BodyInspection(rules: bodyRules ?? .none)
        checksBodies = bodyRules != nil
    }

    init(dissector: SharedDissector, connection: ConnectionID, direction: Direction, protobuf: ProtobufCheck? = nil) {
        self.init(dissector: dissector, connection: connection, direction: direction, bodyRules: protobuf.map { BodyRules(schema: $0.schema) })
    }

    // MARK: Input

    mutating func feed(_ chunk: StreamChunk, context: inout AnalysisContext) {
        let mss = context.recutMSS
        guard mss > 0 && chunk.bytes.count > mss else {
            feed(chunk, piece: 0, context: &context)
            return
        }
        // As the wire carried it (`--mss`): pieces of `mss` bytes, each a segment of its own.
        let pieces = (chunk.bytes.count + mss - 1) / mss
        analysis.recutSegments += pieces - 1
        for k in 0..<pieces {
            var piece = chunk
            piece.offset += Int64(k * mss)
            piece.capturedOffset += Int64(k * mss)
            piece.bytes = chunk.bytes.slice(from: k * mss, count: min(mss, chunk.bytes.count - k * mss))
            piece.traits.remove(.overMSS)
            if piece.bytes.count == mss { piece.traits.insert(.fullSized) } else { piece.traits.remove(.fullSized) }
            feed(piece, piece: UInt32(k), context: &context)
        }
    }

    private mutating func feed(_ chunk: StreamChunk, piece: UInt32, context: inout AnalysisContext) {
        var segment = SegmentMark(start: chunk.offset, frame: chunk.frame, timestamp: chunk.timestamp, traits: chunk.traits, piece: piece)
        // A later part of a segment (reassembly hands one over in parts) starts where the
        // segment did: recovery counts frames that begin at segment starts, not at parts.
        if ledger.segment.isSame(as: segment) {
            segment = ledger.segment
        } else if mode == .recovering, let last = recovery.parts.last?.segment, last.isSame(as: segment) {
            segment = last
        }
        if chunk.midStream && end == 0 && chunk.offset == 0 && mode == .framing && message == nil && context.midStream == .search {
            // Picked up mid-stream: the first byte may be inside a message.
            startRecovery(.midStream, at: 0, keeping: [], segment: segment, candidateFrom: 0, context: &context)
        } else if mode == .recovering && recovery.startsNewSegment(segment) {
            settle(final: false, context: &context)  // the window's segments are complete
        }
        end = chunk.offset + Int64(chunk.bytes.count)
        feed(chunk.bytes, at: chunk.offset, segment: segment, context: &context)
    }

    /// Bytes never captured: the message they fall in is damaged; framing resumes after them
    /// if the message's end is known, else by recovery.
    mutating func gap(at offset: Int64, length: Int64, context: inout AnalysisContext) {
        if mode == .recovering { settle(final: true, context: &context) }  // decide on the bytes before the gap
        end = offset + length
        switch mode {
        case .stopped:
            return
        case .recovering:  // no boundary before the gap: search on after it
            let cause = recovery.cause == .midStream ? FramingRecovery.Cause.midStream : .gap
            startRecovery(cause, at: offset + length, keeping: [], segment: ledger.segment, candidateFrom: 0, context: &context)
            return
        case .framing:
            if let ended = cutter.skipBody(length) {
                markDamaged(length: length, context: &context)
                if ended { dropMessage() }
                return
            }
            if message != nil {
                markDamaged(length: length, context: &context)
                dropMessage()
            }
            analysis.undissectedBytes += Int64(cutter.consumed)
        }
        startRecovery(.gap, at: offset + length, keeping: [], segment: ledger.segment, candidateFrom: 0, context: &context)
    }

    /// End of the direction (FIN, RST, end of capture): a message still open is incomplete.
    mutating func finish(context: inout AnalysisContext) {
        if mode == .recovering { settle(final: true, context: &context) }
        if mode == .framing, let m = message, !m.damaged {
            analysis.incompleteAtEnd += 1
            analysis.incompleteBytes += end - m.start
            context.evidence.add(
                connection, event(.incompleteAtEnd, at: m.start, in: ledger.messageFirstSegment, bytes: cutter.pendingHeader(limit: 16), length: end - m.start))
        }
        inspection.abandon()
        message = nil
        var merged: SegmentLedger.Merged?
        ledger.finish(figures: &analysis, merged: &merged)
        noteMerged(merged, context: &context)
    }

    // MARK: Framing

    mutating func feed(_ bytes: UnsafeRawBufferPointer, at offset: Int64, segment: SegmentMark, context: inout AnalysisContext) {
        if mode == .recovering {
            keepForRecovery(bytes, segment: segment, context: &context)
        } else {
            var merged: SegmentLedger.Merged?
            ledger.enter(segment, messageOpen: message != nil, figures: &analysis, merged: &merged)
            if merged != nil { noteMerged(merged, context: &context) }
            process(bytes, at: offset, context: &context)
        }
    }

    private mutating func process(_ bytes: UnsafeRawBufferPointer, at base: Int64, context: inout AnalysisContext) {
        var i = 0
        while i < bytes.count {
            switch mode {
            case .stopped:
                analysis.undissectedBytes += Int64(bytes.count - i)
                return
            case .recovering:
                keepForRecovery(bytes.dropFirst(i), segment: ledger.segment, context: &context)
                return
            case .framing:
                if message == nil {  // the cutter is idle: a frame begins here
                    message = Message(start: base + Int64(i), sharesFirstSegment: ledger.segmentCarriesAMessage)
                    ledger.beginMessage(at: base + Int64(i))
                }
                let (step, next) = cutter.next(bytes, from: i)
                switch step {
                case .buffered:
                    break
                case .decided(let decision):
                    decided(decision, chunk: bytes.dropFirst(i))
                case .content(let count, let ends):
                    if inspection.active { inspection.feed(bytes.slice(from: i, count: count), at: base + Int64(i), frame: ledger.segment.frame) }
                    if ends { completeMessage(endingAt: base + Int64(next), context: &context) }
                case .malformed(let malformed):
                    self.malformed(malformed, rest: bytes.dropFirst(i), context: &context)
                    return
                }
                i = next
            }
        }
    }

    /// The header decided the frame; `chunk` holds this chunk's bytes from where it was read.
    private mutating func decided(_ d: FrameCutter.Decision, chunk: UnsafeRawBufferPointer) {
        guard var m = message else { return }
        m.type = d.type
        m.isPreamble = d.isPreamble
        message = m
        guard checksBodies && !d.isPreamble else { return }
        if d.buffered == 0 && d.scanned == 0 && d.length <= chunk.count {
            // A frame wholly in this chunk is checked at once; else as its bytes pass.
            inspection.checkWhole(chunk.slice(from: d.body, count: d.length - d.body), start: m.start + Int64(d.body), frame: ledger.segment.frame)
            return
        }
        inspection.begin(start: m.start + Int64(d.body), end: m.start + Int64(d.length))
        if d.buffered > 0 {
            let frame = ledger.messageFirstSegment.frame
            cutter.withBufferedHeader { inspection.feed($0, at: m.start + Int64(d.scanned), frame: frame) }
        }
    }

    private mutating func malformed(_ malformed: FrameCutter.Malformed, rest: UnsafeRawBufferPointer, context: inout AnalysisContext) {
        let kept = cutter.takeMalformed(malformed)
        let m = message ?? Message(start: end)
        let first = ledger.messageFirstSegment  // (before the message is dropped)
        let at = m.start + Int64(malformed.scanned)
        let evidence = Array((kept + rest.prefix(16)).prefix(16))
        analysis.malformed += 1
        analysis.malformedByReason.add(malformed.reason)
        analysis.timeline.add(.malformed, at: first.timestamp)
        let spanned = ledger.messageSegmentMarks  // (before the message is dropped)
        if let export = context.export, export.wants(.malformed, connection: connection) {
            for segment in spanned { context.export!.add(segment.frame) }
        }
        dropMessage()
        analysis.undissectedBytes += Int64(malformed.scanned)
        startRecovery(
            .malformed, at: at, keeping: kept, segment: first, later: spanned, candidateFrom: 1,
            malformedEvent: event(.malformed, reason: malformed.reason, at: at, in: first, bytes: evidence), context: &context)
        keepForRecovery(rest, segment: ledger.segment, context: &context)
    }

    // MARK: Messages

    private mutating func completeMessage(endingAt end: Int64, context: inout AnalysisContext) {
        guard let m = message else { return }
        message = nil
        let first = ledger.messageFirstSegment  // (before the ledger settles the message)
        if !m.damaged { finishBody(context: &context) }
        guard !m.isPreamble && !m.damaged else {
            var merged: SegmentLedger.Merged?
            ledger.dropMessage(figures: &analysis, merged: &merged)
            noteMerged(merged, context: &context)
            if m.isPreamble { analysis.preambleBytes += end - m.start }
            return
        }
        let segments = ledger.messageSegments
        if context.export != nil { exportMessage(type: m.type, partial: segments >= 2, start: m.start, end: end, context: &context) }
        var merged: SegmentLedger.Merged?
        let cause = ledger.countMessage(figures: &analysis, merged: &merged)
        noteMerged(merged, context: &context)
        let length = end - m.start, last = ledger.segment
        if let cause, context.evidence.wantsExample(.partial, direction, cause, in: connection) {
            context.evidence.add(
                example: SplitExample(
                    kind: .partial, connection: connection, direction: direction, offset: m.start, length: length,
                    firstFrame: first.frame, lastFrame: last.frame, count: segments, timestamp: first.timestamp, cause: cause))
        }
        analysis.messages += 1
        analysis.messageBytes += length
        analysis.sizes.add(length)
        context.sizes[direction].add(length)
        if let type = m.type {
            analysis.countType(type)
            if segments >= 2 { analysis.countPartialType(type) }
            context.latencyByType[direction].add((last.timestamp.nanoseconds - first.timestamp.nanoseconds) / 1000, type: type)
        }
        countGlue(m)
        context.completed.append((m.type, last.timestamp.nanoseconds))
        let latency = (last.timestamp.nanoseconds - first.timestamp.nanoseconds) / 1000
        analysis.assemblyLatencyMicroseconds.add(latency)
        context.latencies[direction].add(latency)
        if context.recordMessages {
            context.messages.append(
                MessageRecord(
                    connection: connection, direction: direction, offset: m.start, length: length, type: m.type,
                    firstFrame: first.frame, lastFrame: last.frame, segments: segments,
                    firstTimestamp: first.timestamp, lastTimestamp: last.timestamp, damagedByGap: false))
        }
    }

    /// Glued messages by type: a message is glued when its first segment carried a message
    /// before it, or its last segment carries the next one (middle segments are its own).
    private mutating func countGlue(_ m: Message) {
        if m.sharesFirstSegment, let previous = unsettledGlue { analysis.countGluedType(previous) }
        unsettledGlue = nil
        guard let type = m.type else { return }
        if m.sharesFirstSegment { analysis.countGluedType(type) } else { unsettledGlue = type }
    }

    /// The frame in progress is no message after all (malformed, damaged, or the end).
    private mutating func dropMessage() {
        var merged: SegmentLedger.Merged?  // (a segment merged only with what turned out no message is none)
        ledger.dropMessage(figures: &analysis, merged: &merged)
        message = nil
    }

    /// The frames of the message completing now, when `--export-messages` selects it.
    private func exportMessage(type: UInt64?, partial: Bool, start: Int64, end: Int64, context: inout AnalysisContext) {
        guard let export = context.export,
            export.wants(.all, connection: connection, type: type) || (partial && export.wants(.partial, connection: connection, type: type))
        else { return }
        for segment in ledger.messageSegmentMarks { context.export!.add(segment.frame) }
        if export.recordsMessages {
            context.export!.add(
                MessageExport.Place(connection: connection, direction: direction, offset: start, length: end - start, lastFrame: ledger.segment.frame))
        }
    }

    /// A merged segment just settled: an example of it while the evidence wants one.
    func noteMerged(_ merged: SegmentLedger.Merged?, context: inout AnalysisContext) {
        if let merged, let export = context.export, export.wants(.merged, connection: connection) {
            context.export!.add(merged.segment.frame)
        }
        guard let merged, context.evidence.wantsExample(.merged, direction, merged.cause, in: connection) else { return }
        context.evidence.add(
            example: SplitExample(
                kind: .merged, connection: connection, direction: direction, offset: merged.segment.start, length: 0,
                firstFrame: merged.segment.frame, lastFrame: merged.segment.frame, count: merged.messages, timestamp: merged.segment.timestamp,
                cause: merged.cause))
    }

    private mutating func markDamaged(length: Int64, context: inout AnalysisContext) {
        inspection.abandon()
        guard var m = message, !m.damaged, !m.isPreamble else { return }
        m.damaged = true
        message = m
        analysis.damagedByGaps += 1
        context.evidence.add(connection, event(.damagedByGap, at: m.start, in: ledger.messageFirstSegment, bytes: [], length: length))
    }

    private mutating func finishBody(context: inout AnalysisContext) {
        guard inspection.isPending else { return }
        let (failure, counted) = inspection.finish(frame: ledger.segment.frame)
        analysis.protobufChecked += 1
        guard let failure else {
            // (Without `--count-by` every value is the default: counting it allocated per direction.)
            if inspection.counts { analysis.countProtobufValue(counted) }
            return
        }
        analysis.protobufInvalid += 1
        analysis.protobufInvalidByReason.add(failure.reason)
        context.evidence.add(connection, Self.invalidBodyEvent(failure, inspection, ledger.segment, connection, direction))
    }

    /// Static, given its parts: as a method it had the whole analyzer (over 500 bytes, a dozen
    /// references) copied for every event kept.
    private static func invalidBodyEvent(
        _ failure: (reason: ProtobufFailure, at: Int64), _ inspection: borrowing BodyInspection, _ segment: SegmentMark,
        _ connection: ConnectionID, _ direction: Direction
    ) -> AnalysisEvent {
        var e = AnalysisEvent(
            .invalidProtobuf, reason: nil, connection, direction, at: inspection.bodyStart,
            in: SegmentMark(start: 0, frame: inspection.prefix.isEmpty ? segment.frame : inspection.startFrame, timestamp: segment.timestamp),
            evidence: inspection.prefix, length: inspection.bodyLength)
        e.protobufFailure = ProtobufFailureSite(reason: failure.reason, offset: inspection.bodyStart + failure.at, frame: inspection.failureFrame)
        return e
    }

    // MARK: Evidence

    func event(
        _ kind: AnalysisEvent.Kind, reason: MalformedReason? = nil, at offset: Int64, in segment: SegmentMark, bytes: [UInt8], length: Int64 = 0
    ) -> AnalysisEvent {
        AnalysisEvent(kind, reason: reason, connection, direction, at: offset, in: segment, evidence: InlineBytes(prefixOf: bytes, limit: 16), length: length)
    }
}
