#if canImport(Glibc)
import Glibc
#endif

/// Connection lines waiting in memory for a lower ID, up to `budget` bytes: appended to chunks
/// (64 KiB with one table's budget), each emptied when every line in it has been read, and found
/// by the index entry `keep` returns (the line's address and length, no table beside them). Lines
/// come in the order connections finish and are read in ID order, so they die out of order: one
/// block for all had to move the live ones to its front to reuse the dead ones' room (varint-50k:
/// 35,703 moves in 65 compactions, and each ID's offset rewritten after them), and a block per
/// line cost an allocation and a free; a chunk costs a count per line, its start found from the
/// line's address by alignment. The chunks are carved from one mapping of the budget, its pages
/// touched as they are first used, and emptied ones reused: one from `aligned_alloc` cost 28,000
/// instructions, the allocator consolidating its small free blocks (varint-50k at `-t 1`: 405
/// chunks).
struct WaitingLines {
    let budget: Int
    /// The bytes of the chunks holding lines or being filled.
    var bytes: Int { (chunksUsed - emptied.count) * chunkSize }
    /// The chunk lines are appended to, and where the next one goes in it.
    private var chunk: UnsafeMutableRawPointer?
    private var head = 0
    /// The budget's chunks, mapped at the first line kept (from its first `chunkSize`-aligned
    /// address), the ones used so far, and those of them emptied since.
    private var mapping: (base: UnsafeMutableRawPointer, size: Int)?
    private var chunksUsed = 0
    private var emptied: [UnsafeMutableRawPointer] = []

    /// Bytes a chunk has: an eighth of the budget (a line left unread keeps its chunk), a power
    /// of two from 1 to 64 KiB; 0 below: nothing is kept.
    let chunkSize: Int
    /// Chunks in the budget.
    private var chunkCount: Int { chunkSize > 0 ? budget / chunkSize : 0 }

    init(budget: Int) {
        self.budget = budget
        var size = 1 << 16
        while size > budget / 8 && size > 1024 { size >>= 1 }
        chunkSize = size <= budget / 8 ? size : 0
    }

    /// A chunk starts with the count of its lines not read yet.
    private static let header = 16
    /// Entries `keep` makes have it; other entries never do.
    static let flag: UInt64 = 1 << 63

    /// Keeps a copy of `line`; returns its entry, nil when the budget leaves no room.
    mutating func keep(_ line: UnsafeRawBufferPointer) -> UInt64? {
        let n = line.count
        guard n > 0, n <= chunkSize - Self.header else { return nil }
        if chunk == nil || head + n > chunkSize {
            retireChunk()
            guard let fresh = emptied.popLast() ?? unusedChunk() else { return nil }
            fresh.storeBytes(of: 0, as: Int.self)
            (chunk, head) = (fresh, Self.header)
        }
        let at = chunk! + head
        at.copyMemory(from: line.baseAddress!, byteCount: n)
        head += n
        chunk!.storeBytes(of: chunk!.load(as: Int.self) + 1, as: Int.self)
        return Self.flag | UInt64(UInt(bitPattern: at)) << 16 | UInt64(n)
    }

    /// A chunk not used yet, nil when the budget's are all in use.
    private mutating func unusedChunk() -> UnsafeMutableRawPointer? {
        if mapping == nil {
            let size = (chunkCount + 1) * chunkSize  // (one more, to align to)
            guard chunkCount > 0, let base = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0),
                base != MAP_FAILED
            else { return nil }
            mapping = (base, size)
        }
        let first = (UInt(bitPattern: mapping!.base) + UInt(chunkSize - 1)) & ~UInt(chunkSize - 1)
        // An address past 47 bits (five-level page tables, when a process asks for them) does not
        // fit an entry: the lines go to the file.
        guard chunksUsed < chunkCount, first &+ UInt(chunkCount * chunkSize) <= 1 << 47 else { return nil }
        chunksUsed += 1
        return UnsafeMutableRawPointer(bitPattern: first + UInt((chunksUsed - 1) * chunkSize))
    }

    /// Calls `body` with the line `entry` stands for; each line is read once.
    mutating func read<T>(_ entry: UInt64, _ body: (UnsafeRawBufferPointer) -> T) -> T {
        let at = Self.address(entry)
        defer { release(at) }
        return body(UnsafeRawBufferPointer(start: at, count: Int(entry & 0xFFFF)))
    }

    /// Lets the line `entry` stands for go unread.
    mutating func discard(_ entry: UInt64) { release(Self.address(entry)) }

    /// Gives the chunks back (the lines left in them are discarded first: `bytes` is then 0).
    mutating func close() {
        retireChunk()
        if let mapping { munmap(mapping.base, mapping.size) }
        (mapping, chunksUsed, emptied) = (nil, 0, [])
    }

    private static func address(_ entry: UInt64) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(bitPattern: UInt(truncatingIfNeeded: (entry & ~flag) >> 16))!
    }

    /// One line of a chunk read: the chunk is emptied with its last, unless lines are still to come into it.
    private mutating func release(_ line: UnsafeMutableRawPointer) {
        let start = UnsafeMutableRawPointer(bitPattern: UInt(bitPattern: line) & ~UInt(chunkSize - 1))!
        let left = start.load(as: Int.self) - 1
        start.storeBytes(of: left, as: Int.self)
        if left == 0 && start != chunk { emptied.append(start) }
    }

    /// Stops appending to the current chunk, emptied if every line in it has been read.
    private mutating func retireChunk() {
        guard let full = chunk else { return }
        chunk = nil
        if full.load(as: Int.self) == 0 { emptied.append(full) }
    }
}
