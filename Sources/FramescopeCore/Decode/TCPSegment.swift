/// TCP header flags.
public struct TCPFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let fin = TCPFlags(rawValue: 0x01)
    public static let syn = TCPFlags(rawValue: 0x02)
    public static let rst = TCPFlags(rawValue: 0x04)
    public static let psh = TCPFlags(rawValue: 0x08)
    public static let ack = TCPFlags(rawValue: 0x10)
}

/// One decoded TCP segment. `payload` borrows the packet's bytes: valid only while the packet is.
public struct TCPSegment {
    public let source: Endpoint
    public let destination: Endpoint
    /// The same value for both directions of a connection (`FlowKey.mixedHash`): what the flow
    /// table looks the connection up by, and work is divided or shed by, so that a connection
    /// is kept or let go whole. Computed with the segment, where it is decoded: on the reading
    /// thread at `--threads` past 1, not on the analysis thread that bounds the run.
    public let connectionHash: UInt64
    public var sequence: UInt32
    public var acknowledgment: UInt32
    public var flags: TCPFlags
    public var window: UInt16
    /// The MSS option, when the segment carries one (SYN and SYN/ACK), else 0.
    public var maximumSegmentSize: UInt16
    /// The window scale option's shift count (SYN and SYN/ACK), else -1.
    public var windowScale: Int8
    /// The payload bytes that were captured.
    public var payload: UnsafeRawBufferPointer
    /// Payload bytes the IP header claims but the capture did not keep (snaplen).
    public var missingPayload: Int
    /// Where the payload lies in the capture file (`PacketDecoder.decode(_:info:)`).
    public var payloadLocation = CaptureLocation.unknown

    public init(
        source: Endpoint, destination: Endpoint, sequence: UInt32, acknowledgment: UInt32 = 0,
        flags: TCPFlags, window: UInt16 = 65535, maximumSegmentSize: UInt16 = 0, windowScale: Int8 = -1,
        payload: UnsafeRawBufferPointer, missingPayload: Int = 0
    ) {
        self.source = source
        self.destination = destination
        connectionHash = FlowKey(source, destination).mixedHash
        self.sequence = sequence
        self.acknowledgment = acknowledgment
        self.flags = flags
        self.window = window
        self.maximumSegmentSize = maximumSegmentSize
        self.windowScale = windowScale
        self.payload = payload
        self.missingPayload = missingPayload
    }
}
