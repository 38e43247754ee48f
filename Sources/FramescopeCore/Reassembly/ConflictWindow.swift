/// The last `capacity` bytes delivered in one direction, so that a later copy of the same
/// sequence range can be compared with what was kept.
struct ConflictWindow {
    private var storage: [UInt8]
    /// Stream offset one past the newest byte held.
    private(set) var end: Int64 = 0
    private var held = 0

    init(capacity: Int) {
        // Not `[UInt8](repeating:count:)`: that initializer ran unspecialized here, with a runtime
        // metadata lookup per window (770 instructions, once per direction with data); appending
        // zeros went byte by byte.
        storage = Array(unsafeUninitializedCapacity: capacity) { buffer, count in
            buffer.initialize(repeating: 0)
            count = capacity
        }
    }

    var capacity: Int { storage.count }

    mutating func append(_ bytes: UnsafeRawBufferPointer, at offset: Int64) {
        let n = storage.count
        guard n > 0, !bytes.isEmpty else { return }
        if offset != end { held = 0 }  // a gap: what came before is no longer adjacent
        let tail = bytes.count > n ? bytes.dropFirst(bytes.count - n) : bytes
        let startOffset = offset + Int64(bytes.count - tail.count)
        storage.withUnsafeMutableBytes { ring in
            var position = Int(startOffset % Int64(n))
            var copied = 0
            while copied < tail.count {
                let run = min(n - position, tail.count - copied)
                ring.baseAddress!.advanced(by: position)
                    .copyMemory(from: tail.baseAddress!.advanced(by: copied), byteCount: run)
                copied += run
                position = 0
            }
        }
        end = offset + Int64(bytes.count)
        held = min(n, held + bytes.count)
    }

    /// Compares `bytes` (which sit at `offset`) with the held bytes they overlap. Returns
    /// where the compared range starts, how many bytes it has, and whether any differ.
    func compare(_ bytes: UnsafeRawBufferPointer, at offset: Int64) -> (from: Int64, checked: Int, differs: Bool) {
        let n = storage.count
        let heldStart = end - Int64(held)
        let from = max(offset, heldStart)
        let to = min(offset + Int64(bytes.count), end)
        guard n > 0, from < to else { return (from, 0, false) }
        return storage.withUnsafeBytes { ring in
            var o = from
            while o < to {
                if ring[Int(o % Int64(n))] != bytes[Int(o - offset)] { return (from, Int(to - from), true) }
                o += 1
            }
            return (from, Int(to - from), false)
        }
    }
}
