/// What the capture layer knows about one packet record.
public struct CaptureInfo: Sendable {
    /// 1-based, counted over every record read, as Wireshark numbers frames.
    /// Several input files continue the count, as if joined with `mergecap -a`.
    public var frame: UInt64
    public var timestamp: Timestamp
    public var linkType: LinkType
    /// Bytes captured (may be less than `originalLength` when the snaplen cut the packet).
    public var captureLength: Int
    public var originalLength: Int
    /// Where the packet's bytes lie in the capture file, when they can be read back.
    public var location = CaptureLocation.unknown

    public init(frame: UInt64, timestamp: Timestamp, linkType: LinkType, captureLength: Int, originalLength: Int) {
        self.frame = frame
        self.timestamp = timestamp
        self.linkType = linkType
        self.captureLength = captureLength
        self.originalLength = originalLength
    }
}
