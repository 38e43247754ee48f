import FramescopeCore

/// Writes classic pcap files in memory: either byte order, micro- or nanosecond timestamps.
/// The test suite round-trips them through libpcap.
public struct CaptureFileWriter {
    public var bytes: [UInt8] = []
    public let bigEndian: Bool
    public let nanosecond: Bool

    public init(linkType: LinkType, bigEndian: Bool = false, nanosecond: Bool = false, snapLength: UInt32 = 262_144) {
        self.bigEndian = bigEndian
        self.nanosecond = nanosecond
        append(UInt32(nanosecond ? 0xA1B2_3C4D : 0xA1B2_C3D4))  // magic_number
        append(UInt16(2))  // version_major
        append(UInt16(4))  // version_minor
        append(UInt32(0))  // thiszone
        append(UInt32(0))  // sigfigs
        append(snapLength)  // snaplen
        append(UInt32(bitPattern: linkType.rawValue))  // network
    }

    /// Adds a record; `captureLength` below `packet.count` simulates a snaplen cut.
    public mutating func add(_ packet: [UInt8], at timestamp: Timestamp, captureLength: Int? = nil) {
        let kept = min(captureLength ?? packet.count, packet.count)
        let (seconds, fraction) = timestamp.nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        append(UInt32(truncatingIfNeeded: seconds))  // ts_sec
        append(UInt32(truncatingIfNeeded: nanosecond ? fraction : fraction / 1000))  // ts_usec or ts_nsec
        append(UInt32(kept))  // incl_len
        append(UInt32(packet.count))  // orig_len
        bytes += packet[..<kept]
    }

    private mutating func append<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: bigEndian ? value.bigEndian : value.littleEndian) { bytes.append(contentsOf: $0) }
    }
}
