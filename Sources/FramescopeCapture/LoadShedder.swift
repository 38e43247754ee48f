import FramescopeCore

/// Which connections the capture thread stopped handing to the analysis. A packet dropped
/// because the queue was full leaves a hole in its connection; the rest of that connection is
/// dropped too, so the analysis spends nothing on a stream it can no longer frame whole (each
/// hole would cost a resynchronisation search) and catches up on the others, which stay intact.
/// Until the first drop nothing is decoded here.
struct LoadShedder {
    /// One bit per connection hash bucket (2^20 buckets, 128 KiB, made at the first drop): a
    /// connection sharing a bucket with a shed one is shed too, rare below ~100,000 connections.
    private var shed: [UInt64] = []
    private static let bucketBits = 20
    /// Buckets marked: connections shed (an under-count when two share a bucket).
    private(set) var connections = 0

    /// Whether a packet that found room in the queue belongs to a shed connection.
    func isShed(_ bytes: UnsafeRawBufferPointer, linkType: LinkType) -> Bool {
        guard !shed.isEmpty, let bucket = Self.bucket(bytes, linkType: linkType) else { return false }
        return shed[bucket >> 6] & (1 << UInt64(bucket & 63)) != 0
    }

    /// A packet found no room: its connection is shed from here on.
    mutating func shed(_ bytes: UnsafeRawBufferPointer, linkType: LinkType) {
        guard let bucket = Self.bucket(bytes, linkType: linkType) else { return }
        if shed.isEmpty { shed = [UInt64](repeating: 0, count: (1 << Self.bucketBits) / 64) }
        let bit: UInt64 = 1 << UInt64(bucket & 63)
        if shed[bucket >> 6] & bit == 0 { connections += 1 }
        shed[bucket >> 6] |= bit
    }

    private static func bucket(_ bytes: UnsafeRawBufferPointer, linkType: LinkType) -> Int? {
        guard case .tcp(let segment) = PacketDecoder.decode(bytes, linkType: linkType) else { return nil }
        return Int(truncatingIfNeeded: segment.connectionHash >> UInt64(64 - bucketBits))
    }
}
