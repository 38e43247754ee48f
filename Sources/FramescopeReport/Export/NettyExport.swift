import FramescopeCore

/// The Netty `LengthFieldBasedFrameDecoder` for a length-field SPEC: the same rule (frame =
/// lengthFieldOffset + lengthFieldLength + value + lengthAdjustment), with what Netty cannot
/// express said next to it.
public enum NettyExport {
    public static func java(_ spec: DissectorSpec) throws(LuaDissectorExport.Unsupported) -> String {
        guard case .lengthField(let d) = spec.kind else {
            throw LuaDissectorExport.Unsupported(description: "'\(spec.name)' is not a length-field SPEC; Netty's decoder frames only those")
        }
        var out = "// \(spec.name): framescope SPEC \(d.specText)\n"
        var notes: [String] = []
        if d.encoding == .varint && d.lengthFieldOffset == 0 && d.lengthAdjustment == 0 {
            out += "pipeline.addLast(\"frameDecoder\", new ProtobufVarint32FrameDecoder());\n"
        } else if d.encoding == .binary && [1, 2, 3, 4, 8].contains(d.lengthFieldLength) {
            out += """
                pipeline.addLast("frameDecoder", new LengthFieldBasedFrameDecoder(
                        ByteOrder.\(d.endianness == .big ? "BIG_ENDIAN" : "LITTLE_ENDIAN"),
                        \(d.maxFrameLength), // maxFrameLength
                        \(d.lengthFieldOffset), // lengthFieldOffset
                        \(d.lengthFieldLength), // lengthFieldLength
                        \(d.lengthAdjustment), // lengthAdjustment
                        0, // initialBytesToStrip: keep the header in the frame, as framescope counts it
                        true)); // failFast

                """
        } else {
            notes.append(
                "Netty's LengthFieldBasedFrameDecoder reads binary lengths of 1, 2, 3, 4 or 8 bytes only; this SPEC's length is "
                    + (d.encoding == .binary ? "\(d.lengthFieldLength) bytes" : "\(d.encoding.rawValue)")
                    + ": subclass it and override getUnadjustedFrameLength(buf, offset, length, order) to read it"
                    + (d.encoding == .varint || d.encoding == .ber ? " (its width varies: read it whole before the frame length is known)" : ""))
        }
        if !d.magic.isEmpty { notes.append("check the magic \(hexDigits(d.magic.array)) at offset \(d.magicOffset) in the next handler (the decoder does not)") }
        if !d.bodyMagic.isEmpty { notes.append("check that the body starts with \(hexDigits(d.bodyMagic.array)) in the next handler") }
        if d.minFrameLength > 0 { notes.append("reject frames shorter than \(d.minFrameLength) bytes in the next handler") }
        if d.headerOnlyBelow > 0 { notes.append("length values below \(d.headerOnlyBelow) mean a header-only frame, which Netty cannot express: override getUnadjustedFrameLength") }
        if !d.preamble.isEmpty { notes.append("the stream may start with the preamble \(hexDigits(d.preamble.array)): consume it before this decoder (ByteToMessageDecoder)") }
        if let t = d.typeField { notes.append("the message type is \(t.width) byte\(t.width == 1 ? "" : "s") at offset \(t.offset), big-endian") }
        return out + notes.map { "// \($0)\n" }.joined()
    }
}
