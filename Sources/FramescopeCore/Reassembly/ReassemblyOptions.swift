/// Memory and time limits of the flow table and the reassemblers.
public struct ReassemblyOptions: Sendable {
    /// Out-of-order bytes one direction may hold before its first hole is skipped as a gap.
    public var maxBufferedBytesPerDirection = 4 << 20
    /// Out-of-order segments one direction may hold (bounds the work of a flood of tiny
    /// segments); past it the first hole is skipped as a gap.
    public var maxBufferedSegmentsPerDirection = 16_384
    /// Out-of-order bytes all directions together may hold; past it the direction holding the
    /// most is forced to skip its first hole (counted as a buffer-limit gap).
    public var maxBufferedBytesTotal = 64 << 20
    /// Bytes of recently delivered data each direction keeps to compare retransmitted copies
    /// against (conflict detection); older overlaps are counted as unchecked. Every delivered
    /// byte within it is copied once more, so it is small by default. 0 turns the check off.
    public var conflictWindow = 256
    /// All conflict windows together; directions past it run without the check (counted).
    public var maxConflictWindowBytesTotal = 16 << 20
    /// Connections tracked at once; past it the least recently active sixteenth is finalized.
    public var maxConnections = 1 << 20
    /// A connection with no packet for this long (capture time) is finalized.
    public var idleTimeout: Int64 = 600 * 1_000_000_000
    /// A connection closed by FIN in both directions or by RST is finalized once idle this long.
    /// Shorter saves memory on servers with many short connections (at 13,700 a second, 60 s
    /// holds 820,000 closed ones) but loses tshark's streams: a lossy capture in the corpus
    /// delivers data to connections seconds after their RST (2 s split 68 streams into 76).
    public var closedTimeout: Int64 = 60 * 1_000_000_000
    /// Closed connections kept waiting out `closedTimeout` at once; past it the least recently
    /// active are finalized early. Memory then follows the connections open at once: a server
    /// closing 13,700 connections a second kept 820,000 of them (2.3 GiB) for 60 s otherwise.
    public var maxClosedConnections = 4096
    /// Segments awaiting their ACK, all connections together, that round trips are timed from
    /// (16 bytes each): a capture of one direction only never sees the ACKs.
    public var maxUnackedSegments = 1 << 20

    public init() {}
}
