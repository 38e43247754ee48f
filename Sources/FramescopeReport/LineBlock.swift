#if canImport(Glibc)
import Glibc
#endif

/// Connection lines waiting in memory for a lower ID, in one block that doubles up to `budget`
/// bytes: lines are appended in the order connections finish and read once, in ID order, so a
/// line is dead once every ID up to its own has been read. When the block is full at its budget
/// and a quarter of it or more is dead, the live lines move to its front (a compaction moves at
/// most three bytes for each one it frees); else it says no and the line goes to the spill
/// file. Through the file, each waiting line is written, read back and copied by the kernel
/// (varint-50k: 29,242 reads of the spill without the block, 16,402 with 512 KiB).
struct LineBlock {
    let budget: Int
    private var base: UnsafeMutableRawPointer?
    private var capacity = 0
    /// Where the next line goes; below it, the lines kept and dead ones not reclaimed yet.
    private var head = 0
    private var liveBytes = 0
    /// The lines kept since the last compaction, in block order: ID, offset, length.
    private(set) var kept: [(id: Int, offset: Int, length: Int)] = []
    /// Every ID below it has been read.
    private var firstUnread = 0
    static let initialCapacity = 64 << 10

    init(budget: Int) {
        self.budget = budget
    }

    func release() { free(base) }

    /// Keeps `line` (connection `id`'s, an ID not read yet) and returns its offset, and whether
    /// the lines kept before it moved (`kept` has their offsets); nil when the budget leaves no room.
    mutating func keep(_ line: UnsafeRawBufferPointer, id: Int) -> (offset: Int, moved: Bool)? {
        let n = line.count
        guard n > 0, n <= budget / 2 else { return nil }
        var moved = false
        if head + n > capacity {
            if capacity < budget {
                let wanted = min(budget, max(Self.initialCapacity, capacity * 2, head + n))
                guard let grown = realloc(base, wanted) else { return nil }
                (base, capacity) = (grown, wanted)
            } else if head - liveBytes >= budget / 4 {
                moved = compact()
            }
            guard head + n <= capacity else { return nil }
        }
        let offset = head
        (base! + offset).copyMemory(from: line.baseAddress!, byteCount: n)
        kept.append((id, offset, n))
        head += n
        liveBytes += n
        return (offset, moved)
    }

    /// Calls `body` with the line kept at `offset`; IDs are read in increasing order, each once.
    mutating func read<T>(id: Int, offset: Int, length: Int, _ body: (UnsafeRawBufferPointer) -> T) -> T {
        firstUnread = id + 1
        liveBytes -= length
        defer {
            if liveBytes == 0 {  // all read: start over at the front, nothing to move
                head = 0
                kept.removeAll(keepingCapacity: true)
            }
        }
        return body(UnsafeRawBufferPointer(start: base! + offset, count: length))
    }

    /// Moves the lines not read yet to the front of the block, in their order; true when any moved.
    private mutating func compact() -> Bool {
        var to = 0, count = 0, moved = false
        for line in kept where line.id >= firstUnread {
            if line.offset != to {
                memmove(base! + to, base! + line.offset, line.length)
                moved = true
            }
            kept[count] = (line.id, to, line.length)
            count += 1
            to += line.length
        }
        kept.removeLast(kept.count - count)
        head = to
        return moved
    }
}
