#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The flow table's connection records in one block grown with `realloc`. An array grows by
/// copying every element into a new block: 50,000 records of 448 bytes were written twice over
/// their growth and 30 MB of pages faulted in and given back (7,000 of the 22,000 page faults
/// of the benchmark's 50,000-flow capture, 9% of its run). A large block's `realloc` remaps its
/// pages instead (`mremap`): the records stay where they are in memory, and fault in once.
///
/// As connections finish the block's tail empties; its pages go back to the system 256 KiB at a
/// time (`releaseTail`), so the records' memory follows the connections open, not the most ever
/// open (the benchmark's 50,000 at once, then finishing: 20 MB back, room for what finishing
/// needs, the report's waiting lines among it).
///
/// The records are moved with their bytes, as Swift moves any value that holds no weak
/// reference. Copy-on-write, so the table keeps value semantics.
@usableFromInline struct RecordStore<Element> {
    @usableFromInline final class Block {
        // Only the one `RecordStore` that owns a block (uniquely, when writing) reaches it: the
        // runtime's exclusivity check on every access (10% more instructions) proves nothing.
        @exclusivity(unchecked) @usableFromInline var base: UnsafeMutablePointer<Element>?
        @exclusivity(unchecked) @usableFromInline var count = 0
        @exclusivity(unchecked) @usableFromInline var capacity = 0
        /// Bytes from `base` whose pages may be resident: past them, pages were given back.
        @exclusivity(unchecked) @usableFromInline var residentBytes = 0

        @usableFromInline init() {}

        deinit {
            base?.deinitialize(count: count)
            free(base)
        }

        /// Room for one more: the capacity doubles (from 16), the block moved by `realloc`.
        @usableFromInline func grow() {
            let wanted = max(16, capacity * 2)
            guard let moved = realloc(base, wanted * MemoryLayout<Element>.stride) else { fatalError("out of memory: \(wanted) connection records") }
            base = moved.assumingMemoryBound(to: Element.self)
            capacity = wanted
            residentBytes = wanted * MemoryLayout<Element>.stride
        }

        /// Past the last record, the most bytes of pages kept resident: half of it stays for
        /// the next records (about 300 of them), so a table that shrinks and grows by a few
        /// does not give pages back and fault them in again.
        @usableFromInline static var releaseStep: Int { 256 << 10 }

        @inline(__always) @usableFromInline func releaseTailIfEmpty() {
            if residentBytes &- count &* MemoryLayout<Element>.stride >= Self.releaseStep { releaseTail() }
        }

        /// Gives the whole pages past the last record and half a step back (`MADV_DONTNEED`:
        /// zero-filled if touched again; they hold no record). Inside the block's allocation, so
        /// the allocator's own bytes around it are untouched.
        @usableFromInline func releaseTail() {
            let page = Int(sysconf(Int32(_SC_PAGESIZE)))
            let start = Int(bitPattern: UnsafeMutableRawPointer(base!))
            let from = (start + count * MemoryLayout<Element>.stride + Self.releaseStep / 2 + page - 1) & ~(page - 1)
            let to = (start + residentBytes) & ~(page - 1)
            guard to > from else { return }
            madvise(UnsafeMutableRawPointer(bitPattern: from), to - from, MADV_DONTNEED)
            residentBytes = from - start
        }

        @usableFromInline func copy() -> Block {
            let copy = Block()
            while copy.capacity < count { copy.grow() }
            if count > 0 { copy.base!.initialize(from: base!, count: count) }
            copy.count = count
            return copy
        }
    }

    @usableFromInline var block = Block()

    @usableFromInline init() {}

    @inlinable var count: Int { block.count }
    @inlinable var indices: Range<Int> { 0..<block.count }

    @inlinable subscript(slot: Int) -> Element {
        unsafeAddress {
            precondition(slot >= 0 && slot < block.count, "record slot out of range")
            return UnsafePointer(block.base! + slot)
        }
        unsafeMutableAddress {
            precondition(slot >= 0 && slot < block.count, "record slot out of range")
            makeUnique()
            return block.base! + slot
        }
    }

    @inlinable mutating func append(_ record: consuming Element) {
        makeUnique()
        if block.count == block.capacity { block.grow() }
        (block.base! + block.count).initialize(to: record)
        block.count += 1
        block.residentBytes = max(block.residentBytes, block.count &* MemoryLayout<Element>.stride)
    }

    @discardableResult @inlinable mutating func removeLast() -> Element {
        precondition(block.count > 0, "no record to remove")
        makeUnique()
        block.count -= 1
        defer { block.releaseTailIfEmpty() }
        return (block.base! + block.count).move()
    }

    @inlinable mutating func swapAt(_ i: Int, _ j: Int) {
        precondition(i >= 0 && i < block.count && j >= 0 && j < block.count, "record slot out of range")
        guard i != j else { return }
        makeUnique()
        let kept = (block.base! + i).move()
        (block.base! + i).moveInitialize(from: block.base! + j, count: 1)
        (block.base! + j).initialize(to: kept)
    }

    /// Drops the record in `slot` and moves the last one into it: one copy of its bytes, where
    /// taking the last out and assigning it made two.
    @inlinable mutating func removeFillingFromLast(_ slot: Int) {
        precondition(slot >= 0 && slot < block.count, "record slot out of range")
        makeUnique()
        block.count -= 1
        defer { block.releaseTailIfEmpty() }
        (block.base! + slot).deinitialize(count: 1)
        if slot != block.count { (block.base! + slot).moveInitialize(from: block.base! + block.count, count: 1) }
    }

    /// Every record released, and the block with them.
    @inlinable mutating func removeAll() {
        block = Block()
    }

    @inlinable mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&block) { block = block.copy() }
    }
}
