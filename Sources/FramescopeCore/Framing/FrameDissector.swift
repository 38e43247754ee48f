/// Why a frame header could not be read.
public enum MalformedReason: String, Sendable, CaseIterable {
    case badMagic = "bad-magic"
    case lengthTooLarge = "length-too-large"
    case lengthSmallerThanHeader = "length-smaller-than-header"
    case nonDigitLength = "non-digit-length"
    case varintTooLong = "varint-too-long"
    /// A BER length that is indefinite (0x80), longer than 4 bytes, or reserved (0xFF).
    case badBERLength = "bad-ber-length"
    case delimiterNotFound = "delimiter-not-found"
}

/// The outcome of one `decode` call.
public enum DecodeStep: Equatable, Sendable {
    /// A frame starts at the first byte given and is `length` bytes long (it may extend past
    /// the bytes given: the body is skipped as it arrives, never buffered). Its body (what a
    /// protobuf check reads) starts at `body`; `length` when the framing has no header.
    case frame(length: Int, type: UInt64?, body: Int)
    /// Not enough bytes to decide. The first `scanned` bytes belong to the frame being
    /// decoded and need not be shown again (delimiter scanning); 0 for header-based framing.
    case needMoreData(scanned: Int)
    case malformed(MalformedReason)
    /// `length` bytes of protocol preamble that are not a message (PostgreSQL's one-byte answer
    /// to SSLRequest, the HTTP/2 client preface): skipped and counted apart.
    case preamble(length: Int)
}

/// A single-step frame decoder, in the shape of swift-nio's `NIOSingleStepByteToMessageDecoder`:
/// `decode` is called with the bytes available from the start of a frame, and answers with the
/// frame's length or "need more data" without keeping any of the bytes. Feeding a stream in any
/// chunking gives the same frames (pinned by `DissectorVerifier` in the tests).
///
/// A dissector is configuration only, shared by every direction it frames; the one thing a
/// direction carries is whether it is still at its start (`atStreamStart`), where some protocols
/// frame differently (a preamble, PostgreSQL's untyped startup messages).
public protocol FrameDissector {
    /// Bytes that must be buffered at a frame start before `decode` can decide, at most.
    /// `Int.max` for delimiter framing, which scans instead (see `needMoreData(scanned:)`).
    var headerLength: Int { get }

    /// Whether a stream's start is framed differently; a direction begins with `atStreamStart`
    /// set to this, and it is cleared after a gap and before resynchronising.
    var hasStreamStart: Bool { get }

    /// - Parameters:
    ///   - bytes: the not yet consumed bytes of the current frame, from its first unscanned byte.
    ///   - consumed: bytes of this frame already scanned and dropped by earlier calls.
    ///   - atStreamStart: the direction's state; the dissector clears it once past the start.
    func decode(_ bytes: UnsafeRawBufferPointer, consumed: Int, atStreamStart: inout Bool) -> DecodeStep
}
