/// Frame numbers in the order they were appended, each stored as the zigzag varint of its
/// difference from the one before: a table's connections open in frame order, so a byte or
/// two a number instead of eight (a worker keeps one per connection it saw: a million
/// connections held 8 MB of them).
public struct FrameSequence: Sequence, Sendable {
    private var bytes: [UInt8] = []
    private var last: UInt64 = 0
    public private(set) var count = 0

    public init() {}

    public mutating func append(_ frame: UInt64) {
        let delta = Int64(bitPattern: frame &- last)
        var zigzag = UInt64(bitPattern: (delta &<< 1) ^ (delta >> 63))
        while zigzag >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: zigzag) | 0x80)
            zigzag >>= 7
        }
        bytes.append(UInt8(zigzag))
        last = frame
        count += 1
    }

    public func makeIterator() -> Iterator { Iterator(bytes: bytes) }

    /// How far a reader of the growing sequence has come (`appended(since:into:)`).
    public struct Cursor: Sendable {
        var at = 0
        var last: UInt64 = 0
        public init() {}
    }

    /// Appends to `frames` the numbers appended since `cursor`, which then points past them.
    public func appended(since cursor: inout Cursor, into frames: inout [UInt64]) {
        var iterator = Iterator(bytes: bytes, at: cursor.at, last: cursor.last)
        while let frame = iterator.next() { frames.append(frame) }
        (cursor.at, cursor.last) = (iterator.at, iterator.last)
    }

    public struct Iterator: IteratorProtocol {
        let bytes: [UInt8]
        var at = 0
        var last: UInt64 = 0

        public mutating func next() -> UInt64? {
            guard at < bytes.count else { return nil }
            var zigzag: UInt64 = 0, shift: UInt64 = 0
            while true {
                let byte = bytes[at]
                at += 1
                zigzag |= UInt64(byte & 0x7F) &<< shift
                if byte < 0x80 { break }
                shift += 7
            }
            let delta = Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
            last = last &+ UInt64(bitPattern: delta)
            return last
        }
    }
}
