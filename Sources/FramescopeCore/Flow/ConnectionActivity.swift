/// When a tracked connection was last active and whether it is closed: what the flow table's
/// sweeps read, kept beside each record (same slot) and outside the generic flow table, so that
/// a scan of 200,000 connections reads 16 bytes each in plain compiled code.
@usableFromInline struct ConnectionActivity {
    @usableFromInline var lastSeen: Timestamp
    @usableFromInline var isClosed = false
    /// The connection's group (`ConnectionBucket`), whose limits it counts against, and where
    /// its slot is in the table's list of the group's slots.
    @usableFromInline var bucket: UInt8
    @usableFromInline var placeInBucket: UInt32

    @usableFromInline init(lastSeen: Timestamp, bucket: Int, placeInBucket: Int) {
        self.lastSeen = lastSeen
        self.bucket = UInt8(bucket)
        self.placeInBucket = UInt32(placeInBucket)
    }
}

extension [ConnectionActivity] {
    /// Of `slots` (a group's), the `count` least recently active (the closed ones only, with
    /// `closedOnly`), the lower ID first among equals (`id` of a slot): the same choice however
    /// the table's slots are arranged. A selection, not a sort, and IDs read only for the slots
    /// tied at the last time taken (`id` reads a connection's record: a cache miss each).
    ///
    /// The candidates go into `scratch`, the caller's, kept from call to call: grown by appends
    /// in a new array each time, they were reallocated eight times a pass (varint-50k's
    /// closed-limit passes: 68 M instructions, 23 M of them that), and the filters and maps
    /// that took the victims out made arrays of their own.
    @usableFromInline func leastRecentlyActive(
        _ count: Int, closedOnly: Bool, among slots: [Int32], scratch candidates: inout [(lastSeen: Timestamp, slot: Int)],
        id: (Int) -> ConnectionID
    ) -> [Int] {
        candidates.removeAll(keepingCapacity: true)
        candidates.reserveCapacity(slots.count)
        withUnsafeBufferPointer { activity in
            for s in slots {
                let slot = Int(s)
                if !closedOnly || activity[slot].isClosed { candidates.append((activity[slot].lastSeen, slot)) }
            }
        }
        guard count < candidates.count else { return candidates.map(\.slot) }
        guard count > 0 else { return [] }
        Self.select(count - 1, in: &candidates)
        let boundary = candidates[count - 1].lastSeen
        var taken: [Int] = []
        taken.reserveCapacity(count)
        for c in candidates[..<count] where c.lastSeen < boundary { taken.append(c.slot) }
        var tied: [(id: ConnectionID, slot: Int)] = []
        for c in candidates where c.lastSeen == boundary { tied.append((id(c.slot), c.slot)) }
        tied.sort { $0.id < $1.id }
        for t in tied.prefix(count - taken.count) { taken.append(t.slot) }
        return taken
    }

    /// Reorders `items` so that the one at `k` is the one sorting by time would put there, none
    /// before it later and none after it earlier (Hoare's selection: linear on average).
    @usableFromInline static func select(_ k: Int, in items: inout [(lastSeen: Timestamp, slot: Int)]) {
        var low = 0, high = items.count - 1
        while low < high {
            let pivot = items[low + (high - low) / 2].lastSeen
            var i = low, j = high
            while i <= j {
                while items[i].lastSeen < pivot { i += 1 }
                while pivot < items[j].lastSeen { j -= 1 }
                if i <= j {
                    items.swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            if k <= j {
                high = j
            } else if k >= i {
                low = i
            } else {
                return  // between the two parts: equal to the pivot, in place
            }
        }
    }

    /// The slots `clock` makes due: closed ones idle past `closedTimeout`, others past
    /// `idleTimeout`.
    func due(at clock: Timestamp, options: ReassemblyOptions) -> [(slot: Int, reason: FinalizeReason)] {
        var due: [(slot: Int, reason: FinalizeReason)] = []
        for slot in indices {
            let idle = clock.nanoseconds - self[slot].lastSeen.nanoseconds
            if self[slot].isClosed && idle > options.closedTimeout {
                due.append((slot, .closedTimeout))
            } else if idle > options.idleTimeout {
                due.append((slot, .idleTimeout))
            }
        }
        return due
    }
}

/// A connection to finalize, in the order connections are finalized together: by ID.
@usableFromInline struct DueConnection: Comparable {
    @usableFromInline var id: ConnectionID
    @usableFromInline var slot: Int
    @usableFromInline var reason: FinalizeReason

    @usableFromInline init(id: ConnectionID, slot: Int, reason: FinalizeReason) {
        self.id = id
        self.slot = slot
        self.reason = reason
    }

    @usableFromInline static func < (a: Self, b: Self) -> Bool { a.id < b.id }
    @usableFromInline static func == (a: Self, b: Self) -> Bool { a.id == b.id }
}
