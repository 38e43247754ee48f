/// Where bytes of a packet lie in the capture file they were read from: the input's number and
/// a byte offset, in one word. A reassembler reads delivered bytes back from there to compare a
/// retransmitted copy with, instead of keeping a copy of every direction's last bytes.
public struct CaptureLocation: Sendable, Equatable {
    /// input << 48 | offset; negative when unknown.
    private let rawValue: Int64

    private init(rawValue: Int64) { self.rawValue = rawValue }

    /// Bytes that cannot be read back (standard input from a pipe, pcapng, live capture,
    /// synthetic packets).
    public static let unknown = CaptureLocation(rawValue: -1)

    static let offsetBits = 48

    /// `offset` in input `input`; unknown past 32,767 inputs or 256 TiB.
    public init(input: Int, offset: Int64) {
        guard input >= 0, input < 1 << 15, offset >= 0, offset < 1 << Self.offsetBits else {
            self = .unknown
            return
        }
        rawValue = Int64(input) << Self.offsetBits | offset
    }

    public var isKnown: Bool { rawValue >= 0 }
    public var input: Int { Int(rawValue >> Self.offsetBits) }
    public var offset: Int64 { rawValue & (1 << Self.offsetBits - 1) }

    /// The location `n` bytes further on (unknown stays unknown).
    func advanced(by n: Int) -> CaptureLocation {
        isKnown ? CaptureLocation(rawValue: rawValue + Int64(n)) : self
    }
}
