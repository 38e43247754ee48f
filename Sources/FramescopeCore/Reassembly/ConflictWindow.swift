/// The last `capacity` bytes delivered in one direction, so that a later copy of the same
/// sequence range can be compared with what was kept. One allocation, the ring behind its
/// header, and one reference in the half-stream (a struct with an array was 24 bytes there).
final class ConflictWindow: ManagedBuffer<ConflictWindow.Header, UInt8> {
    struct Header {
        /// Stream offset one past the newest byte held.
        var end: Int64 = 0
        var held = 0
        /// The ring's size (the allocation may be larger).
        let capacity: Int
    }

    /// A window of `capacity` bytes (> 0).
    static func make(capacity: Int) -> ConflictWindow {
        let made = create(minimumCapacity: capacity) { _ in Header(capacity: capacity) }
        return unsafeDowncast(made, to: ConflictWindow.self)
    }

    var end: Int64 { header.end }

    func append(_ bytes: UnsafeRawBufferPointer, at offset: Int64) {
        withUnsafeMutablePointers { header, ring in
            let n = header.pointee.capacity
            guard !bytes.isEmpty else { return }
            if offset != header.pointee.end { header.pointee.held = 0 }  // a gap: what came before is no longer adjacent
            let tail = bytes.count > n ? UnsafeRawBufferPointer(rebasing: bytes.dropFirst(bytes.count - n)) : bytes
            let startOffset = offset + Int64(bytes.count - tail.count)
            var position = Int(startOffset % Int64(n))
            var copied = 0
            while copied < tail.count {
                let run = min(n - position, tail.count - copied)
                UnsafeMutableRawPointer(ring + position).copyMemory(from: tail.baseAddress! + copied, byteCount: run)
                copied += run
                position = 0
            }
            header.pointee.end = offset + Int64(bytes.count)
            header.pointee.held = min(n, header.pointee.held + bytes.count)
        }
    }

    /// Compares `bytes` (which sit at `offset`) with the held bytes they overlap. Returns
    /// where the compared range starts, how many bytes it has, and whether any differ.
    func compare(_ bytes: UnsafeRawBufferPointer, at offset: Int64) -> (from: Int64, checked: Int, differs: Bool) {
        withUnsafeMutablePointers { header, ring in
            let n = header.pointee.capacity, end = header.pointee.end
            let from = max(offset, end - Int64(header.pointee.held))
            let to = min(offset + Int64(bytes.count), end)
            guard from < to else { return (from, 0, false) }
            var o = from
            while o < to {
                if ring[Int(o % Int64(n))] != bytes[Int(o - offset)] { return (from, Int(to - from), true) }
                o += 1
            }
            return (from, Int(to - from), false)
        }
    }
}
