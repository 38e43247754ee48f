/// A direction's last delivered bytes, for retransmitted copies to be compared with: copied,
/// or located in the capture file and read back when a copy overlaps them.
enum RecentBytes {
    case copied(ConflictWindow)
    case located(DeliveredLocations)
}

/// Overlapping copies compared with what was kept: the first copy wins, differing ones are conflicts.
extension HalfStream {

    /// Notes delivered bytes (at `frontier`, from `location` in the capture) for later copies
    /// to be compared with.
    mutating func rememberForConflicts(_ bytes: UnsafeRawBufferPointer, location: CaptureLocation, context: inout ReassemblyContext) {
        let capacity = context.options.conflictWindow
        guard capacity > 0 else { return }
        if window == nil && !windowDenied {
            // Budgeted by the bytes it compares, located or copied: the same directions are
            // checked whichever way the capture is read.
            if context.conflictWindowBytes + capacity <= context.options.maxConflictWindowBytesTotal {
                window = location.isKnown && context.captureFiles != nil ? .located(.make()) : .copied(.make(capacity: capacity))
                context.conflictWindowBytes += capacity
            } else {
                windowDenied = true
                context.directionsWithoutConflictCheck += 1
            }
        }
        switch window {
        case .copied(let ring):
            ring.append(bytes, at: frontier)
        case .located(let deliveries):
            if !deliveries.append(count: bytes.count, at: frontier, location: location, capacity: capacity) {
                let ring = deliveries.copied(capacity: capacity, reading: context.captureFiles)
                ring.append(bytes, at: frontier)
                window = .copied(ring)
            }
        case nil:
            break
        }
    }

    /// Compares an old copy with the delivered bytes still in the conflict window.
    mutating func checkOverlap<Sink: StreamSink>(
        _ bytes: UnsafeRawBufferPointer, at offset: Int64, frame: UInt64, route: Route, context: inout ReassemblyContext, sink: inout Sink,
        state: inout Sink.ConnectionState
    ) {
        let result: (from: Int64, checked: Int, differs: Bool)
        switch window {
        case .copied(let ring): result = ring.compare(bytes, at: offset)
        case .located(let deliveries): result = deliveries.compare(bytes, at: offset, reading: context.captureFiles)
        case nil: result = (offset, 0, false)
        }
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
