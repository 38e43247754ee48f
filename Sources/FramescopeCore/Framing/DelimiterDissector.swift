#if canImport(Glibc)
import Glibc
#endif

/// Delimiter framing: a frame ends with (and includes) `delimiter`. A frame longer than
/// `maxFrameLength` with no delimiter is malformed. Each byte is scanned once: scanned bytes
/// are handed back (`needMoreData(scanned:)`) except the last `delimiter.count - 1`, which may
/// begin a delimiter split across segments.
public struct DelimiterDissector: FrameDissector, Sendable, Hashable {
    public var delimiter: InlineBytes
    public var maxFrameLength: Int

    public init(delimiter: [UInt8] = [0x0D, 0x0A], maxFrameLength: Int = 1 << 20) {
        precondition(!delimiter.isEmpty && delimiter.count <= InlineBytes.capacity, "a delimiter has 1…32 bytes")
        self.delimiter = InlineBytes(delimiter)!
        self.maxFrameLength = maxFrameLength
    }

    public var headerLength: Int { Int.max }

    public var hasStreamStart: Bool { false }

    public func decode(_ b: UnsafeRawBufferPointer, consumed: Int, atStreamStart: inout Bool) -> DecodeStep {
        let last = Int32(delimiter[delimiter.count - 1])
        var i = delimiter.count - 1
        while i < b.count, let base = b.baseAddress {
            // memchr finds the delimiter's last byte many bytes at a time.
            guard let hit = memchr(base + i, last, b.count - i) else { break }
            i = base.distance(to: UnsafeRawPointer(hit))
            if matches(b, endingAt: i) {
                let length = consumed + i + 1
                return length <= maxFrameLength ? .frame(length: length, type: nil, body: length) : .malformed(.delimiterNotFound)
            }
            i += 1
        }
        let scanned = max(0, b.count - (delimiter.count - 1))
        if consumed + b.count > maxFrameLength { return .malformed(.delimiterNotFound) }
        return .needMoreData(scanned: scanned)
    }

    private func matches(_ b: UnsafeRawBufferPointer, endingAt end: Int) -> Bool {
        let start = end + 1 - delimiter.count
        for k in 0..<delimiter.count where b[start + k] != delimiter[k] { return false }
        return true
    }
}
