/// 4-tuple → connection slot: open addressing with linear probing and a cheap multiplicative
/// hash, because the flow table looks up every packet and `Dictionary`'s SipHash costs more
/// than the rest of the lookup. An entry is 8 bytes, the hash's low half and the slot: the key
/// itself is the connection's, compared through `isKey` (the index held a copy of every
/// 48-byte key, 100 bytes a connection at its load). Deleted entries leave tombstones, cleared
/// by rehashing. Slots are unique, so moving and removing find an entry by its slot.
@usableFromInline struct FlowIndex {
    private static let empty: Int32 = -1
    private static let deleted: Int32 = -2

    private var hashes: [UInt32]
    private var slots: [Int32]
    private var mask: Int
    private(set) var count = 0
    private var tombstones = 0

    @usableFromInline init(capacity: Int = 1024) {
        let size = max(16, capacity.nextPowerOfTwo)
        hashes = [UInt32](repeating: 0, count: size)
        slots = [Int32](repeating: Self.empty, count: size)
        mask = size - 1
    }

    /// The slot of `key`; `isKey` says whether the connection in a slot has it.
    @inline(__always)
    func find(_ key: FlowKey, isKey: (Int) -> Bool) -> Int? { find(hash: key.mixedHash, isKey: isKey) }

    /// `find`, given the key's `mixedHash` (a segment's `connectionHash`).
    @inline(__always)
    func find(hash fullHash: UInt64, isKey: (Int) -> Bool) -> Int? {
        let hash = Self.indexHash(fullHash)
        var i = Int(hash) & mask
        while true {
            let slot = slots[i]
            if slot == Self.empty { return nil }
            if slot >= 0 && hashes[i] == hash && isKey(Int(slot)) { return Int(slot) }
            i = (i + 1) & mask
        }
    }

    /// Adds `key` at `slot`; the key must not be present.
    mutating func insert(_ key: FlowKey, slot: Int) {
        insert(hash: Self.indexHash(key.mixedHash), slot: slot)
    }

    /// The half of a key's hash the index places and compares by: the high one. The low bits
    /// pick the key's group (`ConnectionBucket`), and a table with a share of the groups (a
    /// shard of `--threads`) saw only those groups' residues as home positions: its entries
    /// piled into long probe runs (the reading thread's 12 groups of 64 at `-t 2`).
    @inline(__always)
    static func indexHash(_ mixedHash: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: mixedHash >> 32) }

    private mutating func insert(hash: UInt32, slot: Int) {
        if (count + tombstones + 1) * 4 > slots.count * 3 { rehash(to: count * 4 > slots.count ? slots.count * 2 : slots.count) }
        var i = Int(hash) & mask
        while slots[i] >= 0 { i = (i + 1) & mask }
        if slots[i] == Self.deleted { tombstones -= 1 }
        hashes[i] = hash
        slots[i] = Int32(slot)
        count += 1
    }

    /// Points the entry of `key` at `slot` to `newSlot` (its connection moved).
    @usableFromInline mutating func move(_ key: FlowKey, from slot: Int, to newSlot: Int) {
        let i = position(of: key, slot: slot)
        slots[i] = Int32(newSlot)
    }

    @usableFromInline mutating func remove(_ key: FlowKey, slot: Int) {
        let i = position(of: key, slot: slot)
        slots[i] = Self.deleted
        count -= 1
        tombstones += 1
    }

    private func position(of key: FlowKey, slot: Int) -> Int {
        var i = Int(Self.indexHash(key.mixedHash)) & mask
        while slots[i] != Self.empty {
            if slots[i] == Int32(slot) { return i }
            i = (i + 1) & mask
        }
        preconditionFailure("the index does not hold slot \(slot)")
    }

    /// How far past its home position an entry lies, on average: what a lookup walks.
    var meanDisplacement: Double {
        var total = 0, entries = 0
        for i in slots.indices where slots[i] >= 0 {
            total += (i - Int(hashes[i])) & mask
            entries += 1
        }
        return entries == 0 ? 0 : Double(total) / Double(entries)
    }

    private mutating func rehash(to size: Int) {
        let old = slots.indices.filter { slots[$0] >= 0 }.map { (hashes[$0], Int(slots[$0])) }
        self = FlowIndex(capacity: size)
        for (hash, slot) in old { insert(hash: hash, slot: slot) }
    }
}

extension Int {
    fileprivate var nextPowerOfTwo: Int { self <= 1 ? 1 : 1 << (Int.bitWidth - (self - 1).leadingZeroBitCount) }
}
