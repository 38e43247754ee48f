/// The out-of-order buffer: segments ahead of a hole, copied, kept sorted and bounded.
extension HalfStream {

    /// Copies the parts of an out-of-order segment that no buffered segment covers yet;
    /// returns false when it brought nothing new (a copy of buffered data). Bytes the snaplen cut
    /// off cover their range too: the first copy of a byte wins, even a missing one.
    mutating func buffer<Sink: StreamSink>(
        _ payload: UnsafeRawBufferPointer, location: CaptureLocation, missingTail: Int, at start: Int64, frame: UInt64, timestamp: Timestamp, traits: SegmentTraits,
        route: Route, sink: inout Sink, state: inout Sink.ConnectionState, context: inout ReassemblyContext
    ) -> Bool {
        let capturedEnd = start + Int64(payload.count), end = capturedEnd + Int64(missingTail)
        var added = false
        var index = insertionIndex(for: start)
        // A buffered segment that starts before us may cover our beginning.
        if index > head && pending[index - 1].reach > start { index -= 1 }
        var cursor = start
        while cursor < end {
            if index < pending.count && pending[index].offset <= cursor {
                let kept = pending[index]
                let overlapEnd = min(end, kept.reach)
                if overlapEnd > cursor {
                    let comparedEnd = min(overlapEnd, capturedEnd, kept.end)  // captured in both copies
                    if comparedEnd > cursor {
                        compareBuffered(kept, with: payload, payloadStart: start, from: cursor, to: comparedEnd, frame: frame, route: route, sink: &sink, state: &state)
                    }
                    cursor = overlapEnd
                }
                index += 1
                continue
            }
            let pieceEnd = index < pending.count ? min(end, pending[index].offset) : end
            let bytesEnd = max(cursor, min(pieceEnd, capturedEnd))
            let piece = payload.slice(from: Int(cursor - start), count: Int(bytesEnd - cursor))
            let segment = Buffered(
                offset: cursor, bytes: [UInt8](piece), frame: frame, timestamp: timestamp, missingTail: Int(pieceEnd - bytesEnd),
                traits: traits, location: location.advanced(by: Int(cursor - start)))
            if index == head {
                // Before everything pending (segments arriving in reverse order): use a free
                // slot in front, making room once in a while, so each insert is O(1).
                if head == 0 && pending.count > 64 { makeRoomInFront() }
                if head > 0 {
                    head -= 1
                    pending[head] = segment
                } else {
                    pending.insert(segment, at: 0)
                }
                index = head
            } else {
                pending.insert(segment, at: index)
            }
            bufferedCost += segment.cost
            context.addBuffered(segment.cost)
            index += 1
            cursor = pieceEnd
            added = true
        }
        return added
    }

    /// Moves the pending segments back, leaving as many free slots in front as there are
    /// segments, so that a run of earlier segments inserts in O(1) each.
    mutating func makeRoomInFront() {
        let live = pending.count - head
        let filler = Buffered(offset: 0, bytes: [], frame: 0, timestamp: .zero, missingTail: 0, traits: [], location: .unknown)
        var moved = [Buffered](repeating: filler, count: live)
        moved.reserveCapacity(live * 2)
        moved.append(contentsOf: pending[head...])
        pending = moved
        head = live
    }

    func insertionIndex(for offset: Int64) -> Int {
        var low = head, high = pending.count
        while low < high {
            let mid = (low + high) / 2
            if pending[mid].offset < offset { low = mid + 1 } else { high = mid }
        }
        return low
    }

    mutating func compactPending() {
        if head == pending.count {
            pending.removeAll(keepingCapacity: pending.capacity <= 64)
            head = 0
        } else if head > 32 && head * 2 > pending.count {
            pending.removeFirst(head)
            head = 0
        }
    }

    mutating func enforceLimits<Sink: StreamSink>(route: Route, context: inout ReassemblyContext, sink: inout Sink, state: inout Sink.ConnectionState) {
        while hasPending && (bufferedCost > context.options.maxBufferedBytesPerDirection
            || pending.count - head > context.options.maxBufferedSegmentsPerDirection) {
            skipFirstHole(reason: .bufferLimit, route: route, context: &context, sink: &sink, state: &state)
        }
        while hasPending && context.bufferedBytes > context.options.maxBufferedBytesTotal {
            context.globalLimitEvictions += 1
            skipFirstHole(reason: .bufferLimit, route: route, context: &context, sink: &sink, state: &state)
        }
    }
}
