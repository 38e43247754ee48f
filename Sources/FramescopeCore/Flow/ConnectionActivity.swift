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
    /// The `count` least recently active slots, among the closed ones only if `closedOnly`.
    /// Of `slots` (a group's), the `count` least recently active (the closed ones only, with
    /// `closedOnly`), the lower ID first among equals (`id` of a slot): the same choice however
    /// the table's slots are arranged.
    @usableFromInline func leastRecentlyActive(_ count: Int, closedOnly: Bool, among slots: [Int32], id: (Int) -> ConnectionID) -> [Int] {
        var candidates: [(lastSeen: Timestamp, id: ConnectionID, slot: Int)] = []
        for s in slots {
            let slot = Int(s)
            if !closedOnly || self[slot].isClosed { candidates.append((self[slot].lastSeen, id(slot), slot)) }
        }
        candidates.sort { ($0.lastSeen, $0.id) < ($1.lastSeen, $1.id) }
        return candidates.prefix(count).map(\.slot)
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
