extension LengthFieldDissector {
    /// The SPEC that parses back to this dissector, with only the options that differ from their
    /// defaults (`DissectorSpec(parsing:)` of it gives an equal dissector).
    public var specText: String {
        var options = ["offset=\(lengthFieldOffset)"]
        if encoding != .varint && encoding != .ber { options.append("width=\(lengthFieldLength)") }
        if endianness != .big { options.append("endian=\(endianness.rawValue)") }
        if encoding != .binary { options.append("encoding=\(encoding.rawValue)") }
        if lengthAdjustment != 0 { options.append("adjust=\(lengthAdjustment)") }
        if !magic.isEmpty { options.append("magic=\(Self.hex(magic))\(magicOffset != 0 ? "@\(magicOffset)" : "")") }
        if let t = typeField { options.append("type=\(t.offset):\(t.width)") }
        if maxFrameLength != 16 << 20 { options.append("max=\(maxFrameLength)") }
        if minFrameLength != 0 { options.append("min=\(minFrameLength)") }
        if !preamble.isEmpty { options.append("preamble=\(Self.hex(preamble))") }
        if headerOnlyBelow != 0 { options.append("headeronly=\(headerOnlyBelow)") }
        if let bodyOffset { options.append("body=\(bodyOffset)") }
        if !bodyMagic.isEmpty { options.append("bodymagic=\(Self.hex(bodyMagic))") }
        return "length:" + options.joined(separator: ",")
    }

    private static func hex(_ bytes: InlineBytes) -> String {
        (0..<bytes.count).map { i in
            let digits = String(bytes[i], radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }
}
