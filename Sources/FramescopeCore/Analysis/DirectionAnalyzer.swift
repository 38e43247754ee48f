/// Follows one direction's reassembled stream through framing: the cutter finds the frames,
/// the ledger relates them to the segments that carried them, the recovery finds where framing
/// starts again after a malformed header or a gap, and bodies are checked as they pass. This
/// type only routes between them and keeps the message in progress.
struct DirectionAnalyzer {
    private(set) var analysis = DirectionAnalysis()
    private var cutter: FrameCutter
    private var ledger = SegmentLedger()
    private var recovery = FramingRecovery()
    /// The protobuf check of message bodies. Not optional, so the hot path reads
    /// `inspection.active` without copying the struct.
    private var inspection: BodyInspection
    private let checksBodies: Bool
    private let connection: ConnectionID
    private let direction: Direction

    private enum Mode {
        case framing
        /// Looking for where framing starts again (`recovery` holds the bytes).
        case recovering
        /// Gave up: the rest of the stream is undissected.
        case stopped
    }

    private var mode = Mode.framing

    /// The frame in progress.
    private struct Message {
        var start: Int64
        var firstSegment: SegmentMark
        var type: UInt64?
        var isPreamble = false
        var damaged = false
    }

    private var message: Message?
    /// Stream offset one past the last byte seen.
    private var end: Int64 = 0

    init(dissector: SharedDissector, connection: ConnectionID, direction: Direction, protobuf: ProtobufCheck? = nil) {
        cutter = FrameCutter(dissector)
        self.connection = connection
        self.direction = direction
        inspection = BodyInspection(schema: protobuf?.schema)
        checksBodies = protobuf != nil
    }

    // MARK: Input

    mutating func feed(_ chunk: StreamChunk, context: inout AnalysisContext) {
        let segment = SegmentMark(start: chunk.offset, frame: chunk.frame, timestamp: chunk.timestamp)
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
            context.evidence.add(event(.incompleteAtEnd, at: m.start, in: m.firstSegment, bytes: cutter.pendingHeader(limit: 16), length: end - m.start))
        }
        inspection.abandon()
        message = nil
        ledger.finish(figures: &analysis)
    }

    // MARK: Framing

    private mutating func feed(_ bytes: UnsafeRawBufferPointer, at offset: Int64, segment: SegmentMark, context: inout AnalysisContext) {
        if mode == .recovering {
            keepForRecovery(bytes, segment: segment, context: &context)
        } else {
            ledger.enter(segment, messageOpen: message != nil, figures: &analysis)
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
                    message = Message(start: base + Int64(i), firstSegment: ledger.segment)
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
            cutter.withBufferedHeader { inspection.feed($0, at: m.start + Int64(d.scanned), frame: m.firstSegment.frame) }
        }
    }

    private mutating func malformed(_ malformed: FrameCutter.Malformed, rest: UnsafeRawBufferPointer, context: inout AnalysisContext) {
        let kept = cutter.takeMalformed(malformed)
        let m = message ?? Message(start: end, firstSegment: ledger.segment)
        let at = m.start + Int64(malformed.scanned)
        let evidence = Array((kept + rest.prefix(16)).prefix(16))
        analysis.malformed += 1
        analysis.malformedByReason[malformed.reason, default: 0] += 1
        analysis.timeline.add(.malformed, at: m.firstSegment.timestamp)
        dropMessage()
        analysis.undissectedBytes += Int64(malformed.scanned)
        startRecovery(
            .malformed, at: at, keeping: kept, segment: m.firstSegment, candidateFrom: 1,
            malformedEvent: event(.malformed, reason: malformed.reason, at: at, in: m.firstSegment, bytes: evidence), context: &context)
        keepForRecovery(rest, segment: ledger.segment, context: &context)
    }

    // MARK: Messages

    private mutating func completeMessage(endingAt end: Int64, context: inout AnalysisContext) {
        guard let m = message else { return }
        message = nil
        if !m.damaged { finishBody(context: &context) }
        guard !m.isPreamble && !m.damaged else {
            ledger.dropMessage(figures: &analysis)
            if m.isPreamble { analysis.preambleBytes += end - m.start }
            return
        }
        let segments = ledger.messageSegments
        ledger.countMessage(figures: &analysis)
        let length = end - m.start, last = ledger.segment
        analysis.messages += 1
        analysis.messageBytes += length
        analysis.sizes.add(length)
        context.sizes[direction].add(length)
        if let type = m.type { analysis.countType(type) }
        let latency = (last.timestamp.nanoseconds - m.firstSegment.timestamp.nanoseconds) / 1000
        analysis.assemblyLatencyMicroseconds.add(latency)
        context.latencies[direction].add(latency)
        if context.recordMessages {
            context.messages.append(
                MessageRecord(
                    connection: connection, direction: direction, offset: m.start, length: length, type: m.type,
                    firstFrame: m.firstSegment.frame, lastFrame: last.frame, segments: segments,
                    firstTimestamp: m.firstSegment.timestamp, lastTimestamp: last.timestamp, damagedByGap: false))
        }
    }

    /// The frame in progress is no message after all (malformed, damaged, or the end).
    private mutating func dropMessage() {
        ledger.dropMessage(figures: &analysis)
        message = nil
    }

    private mutating func markDamaged(length: Int64, context: inout AnalysisContext) {
        inspection.abandon()
        guard var m = message, !m.damaged, !m.isPreamble else { return }
        m.damaged = true
        message = m
        analysis.damagedByGaps += 1
        context.evidence.add(event(.damagedByGap, at: m.start, in: m.firstSegment, bytes: [], length: length))
    }

    private mutating func finishBody(context: inout AnalysisContext) {
        guard inspection.isPending else { return }
        let (failure, counted) = inspection.finish(frame: ledger.segment.frame)
        analysis.protobufChecked += 1
        guard let failure else {
            analysis.countedValues.add(counted)
            return
        }
        analysis.protobufInvalid += 1
        analysis.protobufInvalidByReason[failure.reason, default: 0] += 1
        var e = event(
            .invalidProtobuf, at: inspection.bodyStart,
            in: SegmentMark(start: 0, frame: inspection.prefix.isEmpty ? ledger.segment.frame : inspection.startFrame, timestamp: ledger.segment.timestamp),
            bytes: inspection.prefix.bytes, length: inspection.bodyLength)
        e.protobufFailure = ProtobufFailureSite(reason: failure.reason, offset: inspection.bodyStart + failure.at, frame: inspection.failureFrame)
        context.evidence.add(e)
    }

    // MARK: Recovery

    private mutating func startRecovery(
        _ cause: FramingRecovery.Cause, at offset: Int64, keeping kept: [UInt8], segment: SegmentMark, candidateFrom: Int,
        malformedEvent: AnalysisEvent? = nil, context: inout AnalysisContext
    ) {
        mode = .recovering
        cutter.reset()
        recovery.begin(
            cause, at: offset, keeping: kept, segment: segment, candidateFrom: candidateFrom, malformedEvent: malformedEvent,
            budget: &context.recoveryBudget)
    }

    /// Fresh bytes while searching go to the window; a full window is decided on at once and,
    /// without a boundary, slides on.
    private mutating func keepForRecovery(_ bytes: UnsafeRawBufferPointer, segment: SegmentMark, context: inout AnalysisContext) {
        var rest = bytes
        while !rest.isEmpty {
            guard mode == .recovering else {
                analysis.undissectedBytes += Int64(rest.count)  // given up
                return
            }
            guard let taken = recovery.append(rest, segment: segment, budget: &context.recoveryBudget) else {
                context.recoveryBudget.exhausted += 1
                countSkipped(Int64(rest.count))
                giveUp(context: &context)
                return
            }
            rest = UnsafeRawBufferPointer(rebasing: rest[taken...])
            guard recovery.isFull else { continue }
            let restOffset = recovery.start + Int64(recovery.bytes.count)
            if decide(endIsSegmentEnd: false, context: &context) {
                if !rest.isEmpty { feed(rest, at: restOffset, segment: segment, context: &context) }
                return
            }
            if recovery.hasSearchedTooLong {
                countSkipped(Int64(rest.count))
                giveUp(context: &context)
                return
            }
            countSkipped(Int64(recovery.slide(budget: &context.recoveryBudget)))
        }
    }

    /// Decides while a decision is due (at a segment's end), or once and for all (`final`: at a
    /// gap or the end, where the window's bytes without a boundary are left undissected).
    private mutating func settle(final: Bool, context: inout AnalysisContext) {
        while mode == .recovering && (final || recovery.isDue) {
            if recovery.bytes.isEmpty || !decide(endIsSegmentEnd: true, context: &context) {
                if final { endWithoutBoundary(context: &context) }
                return
            }
        }
    }

    /// Looks for the best-supported boundary; replays the window from it, part by part, when it
    /// clears the bar.
    private mutating func decide(endIsSegmentEnd: Bool, context: inout AnalysisContext) -> Bool {
        guard let found = recovery.decide(with: cutter.shared, endIsSegmentEnd: endIsSegmentEnd, budget: &context.recoveryBudget) else {
            return false
        }
        let skipped = recovery.slid + Int64(found.offset)
        countSkipped(Int64(found.offset))
        let bits = found.bits.isFinite ? found.bits : nil
        if let bits { analysis.boundaryEvidenceBits = min(analysis.boundaryEvidenceBits ?? bits, bits) }
        switch recovery.cause {
        case .midStream:
            break
        case .malformed:
            analysis.resyncs += 1
            if var e = recovery.malformedEvent {
                e.length = skipped
                e.evidenceBits = bits
                e.looksLike = looksLike(e)
                context.evidence.add(e)
            }
        case .gap:
            analysis.resyncs += 1
            var e = event(.resynchronized, at: recovery.start - recovery.slid, in: recovery.firstSegment, bytes: Array(recovery.bytes.prefix(16)), length: skipped)
            e.evidenceBits = bits
            context.evidence.add(e)
        }
        let cause = recovery.cause
        let (bytes, parts, start) = recovery.take(budget: &context.recoveryBudget)
        mode = .framing
        if cause == .midStream, let tail = parts.last(where: { $0.at <= found.offset }), tail.at < found.offset {
            // The segment that carried the leading tail carries a second message if it goes on.
            ledger.enter(tail.segment, messageOpen: false, figures: &analysis)
            ledger.countLeadingTail()
        }
        bytes.withUnsafeBytes { all in
            for (k, part) in parts.enumerated() {
                let from = max(part.at, found.offset), to = k + 1 < parts.count ? parts[k + 1].at : all.count
                guard from < to else { continue }
                feed(all.slice(from: from, count: to - from), at: start + Int64(from), segment: part.segment, context: &context)
            }
        }
        return true
    }

    /// A search that ends (at a gap or the end) without a boundary: its bytes stay undissected.
    private mutating func endWithoutBoundary(context: inout AnalysisContext) {
        if !recovery.bytes.isEmpty { analysis.boundariesNotFound += 1 }  // an empty window searched nothing
        countSkipped(Int64(recovery.bytes.count))
        closeMalformedEvent(context: &context)
        recovery.abandon(budget: &context.recoveryBudget)
    }

    /// Searched bytes no frame starts in: the tail of a message sent before the capture began
    /// (mid-stream), else junk.
    private mutating func countSkipped(_ count: Int64) {
        if recovery.cause == .midStream { analysis.leadingBytes += count } else { analysis.undissectedBytes += count }
    }

    /// The junk region after a malformed header ends without framing resuming.
    private mutating func closeMalformedEvent(context: inout AnalysisContext) {
        guard var e = recovery.malformedEvent else { return }
        e.length = recovery.slid + Int64(recovery.bytes.count)
        e.looksLike = looksLike(e)
        context.evidence.add(e)
    }

    /// What the malformed header's bytes look like, from the junk region while its start is kept.
    private func looksLike(_ e: AnalysisEvent) -> String? {
        let bytes = recovery.slid == 0 ? Array(recovery.bytes.prefix(256)) : e.bytes
        return HeaderForensics.describe(bytes, reason: e.reason, dissector: cutter.shared.dissector)
    }

    private mutating func giveUp(context: inout AnalysisContext) {
        analysis.stopped = true
        countSkipped(Int64(recovery.bytes.count))
        closeMalformedEvent(context: &context)
        context.evidence.add(event(.gaveUp, at: recovery.start, in: recovery.firstSegment, bytes: Array(recovery.bytes.prefix(16)), length: Int64(recovery.bytes.count)))
        recovery.abandon(budget: &context.recoveryBudget)
        mode = .stopped
    }

    // MARK: Evidence

    private func event(
        _ kind: AnalysisEvent.Kind, reason: MalformedReason? = nil, at offset: Int64, in segment: SegmentMark, bytes: [UInt8], length: Int64 = 0
    ) -> AnalysisEvent {
        AnalysisEvent(kind, reason: reason, connection, direction, at: offset, in: segment, bytes: bytes, length: length)
    }
}
