/// Bounds-checked-once reads from borrowed packet bytes.
///
/// Callers check the length of a header once (`buffer.count >= 20`), then read its fields
/// with these unchecked helpers. Multi-byte fields are unaligned in packets, so every load
/// is `loadUnaligned`.
extension UnsafeRawBufferPointer {
    @inline(__always)
    func u8(_ offset: Int) -> UInt8 {
        self[offset]
    }

    @inline(__always)
    func u16be(_ offset: Int) -> UInt16 {
        UInt16(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    @inline(__always)
    func u32be(_ offset: Int) -> UInt32 {
        UInt32(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inline(__always)
    func u64be(_ offset: Int) -> UInt64 {
        UInt64(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always)
    func u32le(_ offset: Int) -> UInt32 {
        UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    /// The sub-buffer `[from, from + count)`, clamped to what is there.
    @inline(__always)
    func slice(from: Int, count: Int) -> UnsafeRawBufferPointer {
        let start = Swift.min(from, self.count)
        let end = Swift.min(start + Swift.max(count, 0), self.count)
        return UnsafeRawBufferPointer(rebasing: self[start..<end])
    }

    @inline(__always)
    func dropFirst(_ n: Int) -> UnsafeRawBufferPointer {
        slice(from: n, count: self.count - n)
    }

    /// `count` bytes from `from`, which the caller knows are inside: no clamping (recovery's
    /// search takes two such views an offset, and clamping them was a tenth of its work).
    @inline(__always)
    func unchecked(from: Int, count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: baseAddress.map { $0 + from }, count: count)
    }
}
