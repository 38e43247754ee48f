/// Up to 32 bytes stored inline (magic numbers, delimiters, preambles), so that a dissector is a
/// plain value: copying it costs no reference counting.
public struct InlineBytes: Equatable, Hashable, Sendable {
    public static let capacity = 32
    private var storage: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    public private(set) var count = 0

    public init() {}

    /// nil when `bytes` holds more than 32 bytes.
    public init?(_ bytes: [UInt8]) {
        guard bytes.count <= Self.capacity else { return nil }
        count = bytes.count
        withUnsafeMutableBytes(of: &storage) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
    }

    /// The first `limit` bytes of `bytes` (at most `capacity`), without an array in between.
    init(prefixOf bytes: [UInt8], limit: Int = capacity) {
        bytes.withUnsafeBytes { append($0, limit: limit) }
    }

    @inline(__always)
    public subscript(i: Int) -> UInt8 {
        withUnsafeBytes(of: storage) { $0[i] }
    }

    public var isEmpty: Bool { count == 0 }

    /// The bytes as an array (SPEC text, reports, an invalid body's event: one copy, not a
    /// closure call a byte — 540 instructions for 16 bytes).
    public var array: [UInt8] {
        withUnsafeBytes(of: storage) { [UInt8]($0.prefix(count)) }
    }

    /// Appends bytes while the count stays within `limit` (at most `capacity`); the rest are dropped.
    mutating func append(_ bytes: UnsafeRawBufferPointer, limit: Int = capacity) {
        let n = min(bytes.count, min(limit, Self.capacity) - count)
        guard n > 0 else { return }
        let start = count
        withUnsafeMutableBytes(of: &storage) { raw in
            (raw.baseAddress! + start).copyMemory(from: bytes.baseAddress!, byteCount: n)
        }
        count += n
    }

    mutating func removeAll() {
        storage = (0, 0, 0, 0)
        count = 0
    }

    public static func == (a: InlineBytes, b: InlineBytes) -> Bool {
        a.count == b.count && a.storage == b.storage
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        hasher.combine(storage.0)
        hasher.combine(storage.1)
        hasher.combine(storage.2)
        hasher.combine(storage.3)
    }
}
