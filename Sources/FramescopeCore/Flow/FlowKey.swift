/// The 4-tuple of a connection, in canonical order so that both directions hash alike.
@usableFromInline struct FlowKey: Equatable {
    var low: Endpoint
    var high: Endpoint

    init(_ a: Endpoint, _ b: Endpoint) {
        if a < b { low = a; high = b } else { low = b; high = a }
    }

    /// A cheap hash of every field, every bit of it depending on every field (`ConnectionBucket`
    /// takes the low bits, `FlowIndex` the high half). The ports are multiplied in like the addresses:
    /// shifted into the top bits as they were, a client's port reached almost none of the low
    /// bits, and one host's thousands of connections to a server shared a handful of slots.
    var mixedHash: UInt64 {
        var h = low.address.low &* 0x9E37_79B9_7F4A_7C15
        h ^= high.address.low &* 0xC2B2_AE3D_27D4_EB4F
        h ^= (low.address.high ^ (high.address.high << 17 | high.address.high >> 47)) &* 0x1656_67B1_9E37_79F9
        h ^= (UInt64(low.port) << 16 | UInt64(high.port)) &* 0xD6E8_FEB8_6659_FD93
        // MurmurHash3's finalizer: the high bits fold into the low ones.
        h ^= h >> 33
        h = h &* 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 33
        return h
    }
}

/// Connections fall into 64 fixed groups by their hash. The table's connection limits hold per
/// group (a 64th each), and workers that share a capture's connections (`--threads`) take whole
/// groups, so each finalizes what one table over all of them would.
public enum ConnectionBucket {
    public static let count = 64

    @inlinable static func of(_ hash: UInt64) -> Int { Int(hash % UInt64(count)) }

    /// A limit shared out over the groups (at least one each).
    @inlinable static func share(of limit: Int) -> Int { max(1, limit / count) }
}

extension TCPSegment {
    /// The connection's group (`ConnectionBucket`).
    public var connectionBucket: Int { ConnectionBucket.of(connectionHash) }
}
