/// The capture's connection IDs over tables that each saw a share of its connections
/// (`--threads`): one table numbers connections as they open, so the capture's IDs are every
/// table's connections merged by first frame. Kept as the table of each capture ID (a byte a
/// connection, where a table of every worker's IDs took eight), with the capture ID of every
/// `stride`th connection of each table to find any other from.
public struct ConnectionNumbering: Sendable {
    /// `owners[id]`: the table holding the capture's connection `id` (at most 255 tables).
    public let owners: [UInt8]
    /// `checkpoints[table][j]`: the capture ID of the table's connection `j * stride`.
    private let checkpoints: [[Int]]
    private static let stride = 32

    /// - Parameter firstFrames: each table's connections' first frames, by its own IDs.
    public init(firstFrames: [FrameSequence]) {
        precondition(firstFrames.count <= 256, "at most 256 tables")
        var owners: [UInt8] = []
        owners.reserveCapacity(firstFrames.reduce(0) { $0 + $1.count })
        var checkpoints = firstFrames.map { _ in [Int]() }
        var frames = firstFrames.map { $0.makeIterator() }
        var heads = frames.indices.map { frames[$0].next() }  // each table's next first frame
        var numbered = firstFrames.map { _ in 0 }
        while let k = Self.earliest(heads.count, through: .max, next: { heads[$0] }) {
            if numbered[k] % Self.stride == 0 { checkpoints[k].append(owners.count) }
            owners.append(UInt8(k))
            numbered[k] += 1
            heads[k] = frames[k].next()
        }
        self.owners = owners
        self.checkpoints = checkpoints
    }

    /// The table whose next connection opened first (`next(k)`: table `k`'s next first frame, nil
    /// when it has none), if that frame is at most `frontier`: the next connection one table over
    /// all of them would have numbered. (The reading thread of a sharded run numbers the lines it
    /// is handed so as they come: `ShardedLines`. Inlinable, for the closure to be inlined there:
    /// called across the modules, it cost 190 instructions a connection.)
    @inlinable @inline(__always)
    public static func earliest(_ tables: Int, through frontier: UInt64, next: (Int) -> UInt64?) -> Int? {
        var earliest: Int?, first = UInt64.max
        for k in 0..<tables {
            guard let frame = next(k), frame <= frontier, earliest == nil || frame < first else { continue }
            (earliest, first) = (k, frame)
        }
        return earliest
    }

    /// The capture's ID of `table`'s connection `id`.
    public func captureID(table: Int, id: Int) -> Int {
        var captureID = checkpoints[table][id / Self.stride]
        var left = id % Self.stride
        while left > 0 {
            captureID += 1
            if owners[captureID] == table { left -= 1 }
        }
        return captureID
    }
}
