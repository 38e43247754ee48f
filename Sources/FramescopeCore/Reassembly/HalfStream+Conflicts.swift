/// Overlapping copies compared with what was kept: the first copy wins, differing ones are conflicts.
extension HalfStream {

    mutating func rememberForConflicts(_ bytes: UnsafeRawBufferPointer, context: inout ReassemblyContext) {
        let capacity = context.options.conflictWindow
        guard capacity > 0 else { return }
        if window == nil && !windowDenied {
            if context.conflictWindowBytes + capacity <= context.options.maxConflictWindowBytesTotal {
                window = ConflictWindow.make(capacity: capacity)
                context.conflictWindowBytes += capacity
            } else {
                windowDenied = true
                context.directionsWithoutConflictCheck += 1
            }
        }
        window?.append(bytes, at: frontier)
    }

    /// Compares an old copy with the delivered bytes still in the conflict window.
    mutating func checkOverlap<Sink: StreamSink>(
        _ bytes: UnsafeRawBufferPointer, at offset: Int64, frame: UInt64, route: Route, sink: inout Sink, state: inout Sink.ConnectionState
    ) {
        let result = window?.compare(bytes, at: offset) ?? (from: offset, checked: 0, differs: false)
        if bytes.count > result.checked { statistics.uncheckedOverlapBytes += Int64(bytes.count - result.checked) }
        if result.differs {
            reportConflict(at: result.from, length: Int64(result.checked), frame: frame, route: route, sink: &sink, state: &state)
        }
    }

    /// In-order bytes about to be delivered may overlap buffered copies that came earlier.
    mutating func compareWithPending<Sink: StreamSink>(
        _ bytes: UnsafeRawBufferPointer, at start: Int64, frame: UInt64, route: Route, sink: inout Sink, state: inout Sink.ConnectionState
    ) {
        guard hasPending else { return }  // (in order: no box to look into)
        let end = start + Int64(bytes.count)
        var index = head
        while index < pending.count && pending[index].offset < end {
            let kept = pending[index]
            let from = max(start, kept.offset), to = min(end, kept.end)
            if from < to {
                compareBuffered(kept, with: bytes, payloadStart: start, from: from, to: to, frame: kept.frame, route: route, sink: &sink, state: &state)
            }
            index += 1
        }
    }

    mutating func compareBuffered<Sink: StreamSink>(
        _ kept: Buffered, with payload: UnsafeRawBufferPointer, payloadStart: Int64, from: Int64, to: Int64,
        frame: UInt64, route: Route, sink: inout Sink, state: inout Sink.ConnectionState
    ) {
        let differs = kept.bytes.withUnsafeBytes { keptBytes in
            var o = from
            while o < to {
                if keptBytes[Int(o - kept.offset)] != payload[Int(o - payloadStart)] { return true }
                o += 1
            }
            return false
        }
        if differs { reportConflict(at: from, length: to - from, frame: frame, route: route, sink: &sink, state: &state) }
    }

    mutating func reportConflict<Sink: StreamSink>(
        at offset: Int64, length: Int64, frame: UInt64, route: Route, sink: inout Sink, state: inout Sink.ConnectionState
    ) {
        statistics.conflicts += 1
        statistics.conflictBytes += length
        sink.conflict(
            StreamConflict(connection: route.connection, direction: route.direction, offset: offset, length: length, frame: frame), state: &state)
    }
}
