/// PostgreSQL wire protocol v3: `type(1) length(4, includes itself)` messages, except at the
/// start. The client's first messages are untyped (`length(4) code(4)`: StartupMessage, and
/// SSLRequest/GSSENCRequest, which are followed by another untyped message); the server may
/// answer an SSLRequest with one byte, 'N' or 'S', which is preamble, not a message.
public struct PostgresDissector: FrameDissector, Sendable, Hashable {
    public var isClient: Bool
    public var maxFrameLength: Int

    public init(isClient: Bool, maxFrameLength: Int = 16 << 20) {
        self.isClient = isClient
        self.maxFrameLength = maxFrameLength
    }

    static let typed = LengthFieldDissector(lengthFieldOffset: 1, lengthFieldLength: 4, lengthAdjustment: -4, typeField: (0, 1))
    static let untyped = LengthFieldDissector(lengthFieldOffset: 0, lengthFieldLength: 4, lengthAdjustment: -4)

    public var headerLength: Int { 8 }

    /// A stream starts with untyped messages (client) or the one-byte SSL answer (server).
    public var hasStreamStart: Bool { true }

    public func decode(_ b: UnsafeRawBufferPointer, consumed: Int, atStreamStart startup: inout Bool) -> DecodeStep {
        guard startup else { return checked(Self.typed.decodeFrame(b)) }
        if isClient {
            guard b.count >= 8 else { return .needMoreData(scanned: 0) }
            let code = b.u32be(4)
            // SSLRequest, GSSENCRequest: another untyped message follows.
            if code != 80_877_103 && code != 80_877_104 { startup = false }
            // A startup message holds at least its length and code: the 8 bytes read here.
            if case .frame(let length, _, _) = Self.untyped.decodeFrame(b), length < 8 { return .malformed(.lengthSmallerThanHeader) }
            return checked(Self.untyped.decodeFrame(b))
        }
        guard b.count >= 2 else { return .needMoreData(scanned: 0) }
        startup = false
        // 'N'/'S'/'G' followed by a typed message (whose length starts with 0x00) is the answer
        // to SSLRequest; a typed 'N' (NoticeResponse) would be followed by its length.
        if (b[0] == 0x4E || b[0] == 0x53 || b[0] == 0x47) && b[1] != 0 { return .preamble(length: 1) }
        return checked(Self.typed.decodeFrame(b))
    }

    private func checked(_ step: DecodeStep) -> DecodeStep {
        if case .frame(let length, _, _) = step, length > maxFrameLength { return .malformed(.lengthTooLarge) }
        if case .frame(let length, _, _) = step, length < 5 { return .malformed(.lengthSmallerThanHeader) }
        return step
    }
}
