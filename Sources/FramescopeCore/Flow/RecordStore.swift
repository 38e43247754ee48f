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
/// The records are moved with their bytes, as Swift moves any value that holds no weak
/// reference. Copy-on-write, so the table keeps value semantics.
@usableFromInline struct RecordStore<Element> {
    @usableFromInline final class Block {
        // Only the one `RecordStore` that owns a block (uniquely, when writing) reaches it: the
        // runtime's exclusivity check on every access (10% more instructions) proves nothing.
        @exclusivity(unchecked) @usableFromInline var base: UnsafeMutablePointer<Element>?
        @exclusivity(unchecked) @usableFromInline var count = 0
        @exclusivity(unchecked) @usableFromInline var capacity = 0

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

    @inlinable mutating func append(_ record: Element) {
        makeUnique()
        if block.count == block.capacity { block.grow() }
        (block.base! + block.count).initialize(to: record)
        block.count += 1
    }

    @discardableResult @inlinable mutating func removeLast() -> Element {
        precondition(block.count > 0, "no record to remove")
        makeUnique()
        block.count -= 1
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

    /// Every record released, and the block with them.
    @inlinable mutating func removeAll() {
        block = Block()
    }

    @inlinable mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&block) { block = block.copy() }
    }
}
