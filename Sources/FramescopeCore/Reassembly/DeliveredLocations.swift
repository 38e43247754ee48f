/// Where a direction's last delivered bytes lie in the capture file: one entry per delivery
/// that reaches into the window, a few at most. What `ConflictWindow` copies, located instead,
/// and read back only when a retransmitted copy overlaps them: 112 bytes of heap where the
/// copy takes 304, and no copy of every delivery. A direction whose deliveries are too small
/// for `maxDeliveries` to span the window, or whose bytes cannot be read back, changes to the
/// copy (`copied(capacity:reading:)`): the bytes compared are the same either way.
final class DeliveredLocations: ManagedBuffer<DeliveredLocations.Header, DeliveredLocations.Delivery> {
    struct Header {
        /// Stream offset one past the newest byte held, and how many bytes before it are held.
        var end: Int64 = 0
        var held = 0
        var count = 0
    }

    /// A delivery: where its first byte is in the stream and in the file. It runs to the next
    /// delivery's start (the last to `end`).
    struct Delivery {
        var start: Int64
        var location: CaptureLocation
    }

    static let maxDeliveries = 4

    static func make() -> DeliveredLocations {
        unsafeDowncast(create(minimumCapacity: maxDeliveries) { _ in Header() }, to: DeliveredLocations.self)
    }

    /// Notes `count` bytes delivered at `offset` from `location`, keeping at most `capacity`
    /// bytes; false (nothing noted) when they cannot be: the bytes are not located, or the
    /// window would need more deliveries than there is room for.
    func append(count: Int, at offset: Int64, location: CaptureLocation, capacity: Int) -> Bool {
        guard location.isKnown else { return false }
        return withUnsafeMutablePointers { header, deliveries in
            let end = offset + Int64(count)
            // After a gap, what came before is no longer adjacent: nothing is held.
            let adjacent = offset == header.pointee.end
            let old = adjacent ? header.pointee.count : 0
            let held = min(capacity, (adjacent ? header.pointee.held : 0) + count)
            // Deliveries that end at or before the window's new start are no longer needed.
            let windowStart = end - Int64(held)
            var dropped = 0
            while dropped < old && (dropped + 1 < old ? deliveries[dropped + 1].start : offset) <= windowStart { dropped += 1 }
            let kept = old - dropped
            guard kept < Self.maxDeliveries else { return false }
            if dropped > 0 { for k in 0..<kept { deliveries[k] = deliveries[k + dropped] } }
            deliveries[kept] = Delivery(start: offset, location: location)
            header.pointee = Header(end: end, held: held, count: kept + 1)
            return true
        }
    }

    /// Compares `bytes` (which sit at `offset`) with the held bytes they overlap, read from
    /// `files`. Returns where the compared range starts, how many bytes it has (0 when they
    /// could not be read), and whether any differ.
    func compare(_ bytes: UnsafeRawBufferPointer, at offset: Int64, reading files: CaptureFiles?) -> (from: Int64, checked: Int, differs: Bool) {
        let (end, held) = (header.end, header.held)
        let from = max(offset, end - Int64(held))
        let to = min(offset + Int64(bytes.count), end)
        guard from < to, let files else { return (from, 0, false) }
        var differs = false
        let readAll = forEachHeld(from: from, to: to) { start, location, count in
            files.forEachPiece(at: location, count: count) { done, piece in
                differs = !piece.elementsEqual(bytes.slice(from: Int(start - offset) + done, count: piece.count))
                return !differs
            } && !differs
        }
        if differs { return (from, Int(to - from), true) }
        return readAll ? (from, Int(to - from), false) : (from, 0, false)
    }

    /// The held bytes copied into a new `ConflictWindow` of `capacity` bytes (read from
    /// `files`; what cannot be read is left out, as a gap would leave it).
    func copied(capacity: Int, reading files: CaptureFiles?) -> ConflictWindow {
        let window = ConflictWindow.make(capacity: capacity)
        let (end, held) = (header.end, header.held)
        guard let files, held > 0 else { return window }
        _ = forEachHeld(from: end - Int64(held), to: end) { start, location, count in
            files.forEachPiece(at: location, count: count) { done, piece in
                window.append(piece, at: start + Int64(done))
                return true
            }
        }
        return window
    }

    /// Calls `body` with each delivery's part of [from, to): its stream offset, its location
    /// and its length, in order, while `body` returns true. Returns whether every call did.
    private func forEachHeld(from: Int64, to: Int64, _ body: (Int64, CaptureLocation, Int) -> Bool) -> Bool {
        withUnsafeMutablePointers { header, deliveries in
            let count = header.pointee.count
            for k in 0..<count {
                let start = deliveries[k].start
                let end = k + 1 < count ? deliveries[k + 1].start : header.pointee.end
                let (lower, upper) = (max(from, start), min(to, end))
                guard lower < upper else { continue }
                guard body(lower, deliveries[k].location.advanced(by: Int(lower - start)), Int(upper - lower)) else { return false }
            }
            return true
        }
    }
}
