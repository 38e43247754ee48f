/// A length-field dissector whose header is a varint length and nothing else
/// (`LengthFieldDissector.plainVarintLimit`, `--dissector varint`): the same frames, lengths and
/// reasons, decoded without the general path's fields — by the frame cutter once a message
/// (`SharedDissector`) and by recovery's search once an offset (`FrameChainScorer`).
struct PlainVarintDissector: FrameDissector {
    /// The longest frame.
    let limit: Int

    var headerLength: Int { 5 }
    var hasStreamStart: Bool { false }

    @inline(__always)
    func decode(_ b: UnsafeRawBufferPointer, consumed: Int, atStreamStart: inout Bool) -> DecodeStep {
        var value: UInt64 = 0
        var i = 0
        while true {
            guard i < b.count else { return .needMoreData(scanned: 0) }
            let byte = b[i]
            value |= UInt64(byte & 0x7F) &<< (7 &* UInt64(i))
            i &+= 1
            if byte & 0x80 == 0 { break }
            if i == 5 { return .malformed(.varintTooLong) }
        }
        guard value <= UInt64(limit), i &+ Int(value) <= limit else { return .malformed(.lengthTooLarge) }
        return .frame(length: i &+ Int(value), type: nil, body: i)
    }
}
