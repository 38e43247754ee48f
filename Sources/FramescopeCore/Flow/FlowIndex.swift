/// 4-tuple → connection slot: open addressing with linear probing and a cheap multiplicative
/// hash, because the flow table looks up every packet and `Dictionary`'s SipHash costs more
/// than the rest of the lookup. Deleted entries leave tombstones, cleared by rehashing.
struct FlowIndex {
    private static let empty: Int32 = -1
    private static let deleted: Int32 = -2

    private var keys: [FlowKey]
    private var slots: [Int32]
    private var mask: Int
    private(set) var count = 0
    private var tombstones = 0

    init(capacity: Int = 1024) {
        let size = max(16, capacity.nextPowerOfTwo)
        keys = [FlowKey](repeating: FlowKey.none, count: size)
        slots = [Int32](repeating: Self.empty, count: size)
        mask = size - 1
    }

    subscript(key: FlowKey) -> Int? {
        var i = Int(truncatingIfNeeded: key.mixedHash) & mask
        while true {
            let slot = slots[i]
            if slot == Self.empty { return nil }
            if slot >= 0 && keys[i] == key { return Int(slot) }
            i = (i + 1) & mask
        }
    }

    /// Adds `key`, which must not be present.
    mutating func insert(_ key: FlowKey, slot: Int) {
        if (count + tombstones + 1) * 4 > slots.count * 3 { rehash(to: count * 4 > slots.count ? slots.count * 2 : slots.count) }
        var i = Int(truncatingIfNeeded: key.mixedHash) & mask
        while slots[i] >= 0 { i = (i + 1) & mask }
        if slots[i] == Self.deleted { tombstones -= 1 }
        keys[i] = key
        slots[i] = Int32(slot)
        count += 1
    }

    /// Points `key`, which must be present, at another slot (its connection moved).
    mutating func move(_ key: FlowKey, to slot: Int) {
        var i = Int(truncatingIfNeeded: key.mixedHash) & mask
        while slots[i] != Self.empty {
            if slots[i] >= 0 && keys[i] == key {
                slots[i] = Int32(slot)
                return
            }
            i = (i + 1) & mask
        }
        preconditionFailure("moving a key the index does not hold")
    }

    mutating func remove(_ key: FlowKey) {
        var i = Int(truncatingIfNeeded: key.mixedHash) & mask
        while slots[i] != Self.empty {
            if slots[i] >= 0 && keys[i] == key {
                slots[i] = Self.deleted
                count -= 1
                tombstones += 1
                return
            }
            i = (i + 1) & mask
        }
    }

    /// Every (key, slot) pair.
    var entries: [(key: FlowKey, slot: Int)] {
        slots.indices.filter { slots[$0] >= 0 }.map { (keys[$0], Int(slots[$0])) }
    }

    private mutating func rehash(to size: Int) {
        let old = entries
        self = FlowIndex(capacity: size)
        for (key, slot) in old { insert(key, slot: slot) }
    }
}

extension Int {
    fileprivate var nextPowerOfTwo: Int { self <= 1 ? 1 : 1 << (Int.bitWidth - (self - 1).leadingZeroBitCount) }
}
