extension LengthFieldDissector {
    /// The SPEC that parses back to this dissector, with only the options that differ from their
    /// defaults (`DissectorSpec(parsing:)` of it gives an equal dissector).
    public var specText: String {
        var options = ["offset=\(lengthFieldOffset)"]
        if encoding != .varint && encoding != .ber { options.append("width=\(lengthFieldLength)") }
        if endianness != .big { options.append("endian=\(endianness.rawValue)") }
        if encoding != .binary { options.append("encoding=\(encoding.rawValue)") }
        if lengthAdjustment != 0 { options.append("adjust=\(lengthAdjustment)") }
        if !magic.isEmpty { options.append("magic=\(hexDigits(magic.array))\(magicOffset != 0 ? "@\(magicOffset)" : "")") }
        if let t = typeField { options.append("type=\(t.offset):\(t.width)") }
        if maxFrameLength != 16 << 20 { options.append("max=\(maxFrameLength)") }
        if minFrameLength != 0 { options.append("min=\(minFrameLength)") }
        if !preamble.isEmpty { options.append("preamble=\(hexDigits(preamble.array))") }
        if headerOnlyBelow != 0 { options.append("headeronly=\(headerOnlyBelow)") }
        if let bodyOffset { options.append("body=\(bodyOffset)") }
        if !bodyMagic.isEmpty { options.append("bodymagic=\(hexDigits(bodyMagic.array))") }
        return "length:" + options.joined(separator: ",")
    }
}

/// `bytes` as lowercase hex digits, two a byte (`000000ff`), as SPECs write magics.
public func hexDigits(_ bytes: [UInt8]) -> String {
    bytes.map { $0 < 0x10 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}
