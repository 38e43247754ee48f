/// The 4-tuple of a connection, in canonical order so that both directions hash alike.
@usableFromInline struct FlowKey: Equatable {
    var low: Endpoint
    var high: Endpoint

    init(_ a: Endpoint, _ b: Endpoint) {
        if a < b { low = a; high = b } else { low = b; high = a }
    }

    /// A cheap, well-mixed hash of every field (for `FlowIndex`).
    var mixedHash: UInt64 {
        var h = low.address.low &* 0x9E37_79B9_7F4A_7C15
        h ^= high.address.low &* 0xC2B2_AE3D_27D4_EB4F
        h ^= (low.address.high ^ (high.address.high << 17 | high.address.high >> 47)) &* 0x1656_67B1_9E37_79F9
        h ^= UInt64(low.port) << 48 | UInt64(high.port) << 32
        return (h ^ (h >> 29)) &* 0xBF58_476D_1CE4_E5B9 ^ (h >> 32)
    }
}

extension TCPSegment {
    /// The same value for both directions of a connection: what work is divided or shed by, so
    /// that a connection is kept or let go whole.
    public var connectionHash: UInt64 { FlowKey(source, destination).mixedHash }
}
