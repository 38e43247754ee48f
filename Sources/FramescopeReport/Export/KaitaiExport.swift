import FramescopeCore

/// A Kaitai Struct description (`.ksy`) of one frame of a SPEC, and of a stream as frames one
/// after another: the header fields in offset order (the magic as `contents`, the type with the
/// protocol file's names as an enum, the length field in its encoding), the body sized by the
/// SPEC's rule (frame = offset + width + value + adjust). Length fields of 3, 5, 6 or 7 bytes,
/// varints and BER lengths are read as bytes with their value computed in `instances`. Delimiter
/// framing exports when the delimiter is one byte (Kaitai terminates on a byte).
public enum KaitaiExport {
    public static func ksy(_ spec: DissectorSpec, name: String? = nil) throws(LuaDissectorExport.Unsupported) -> String {
        let id = LuaDissectorExport.identifier(name ?? (spec.name == spec.text ? "framescope" : spec.name))
        switch spec.kind {
        case .postgres:
            throw LuaDissectorExport.Unsupported(description: "preset:postgres frames its first messages without a type byte; a .ksy describes one frame layout")
        case .delimiter(let d):
            guard d.delimiter.count == 1 else {
                throw LuaDissectorExport.Unsupported(
                    description: "'\(spec.name)' ends frames with \(d.delimiter.count) bytes; Kaitai terminates a field on one byte (use lines for \\n)")
            }
            return header(id, spec, doc: "Frames end with the byte \(hex(d.delimiter[0])) (included in the frame).")
                + """
                types:
                  frame:
                    seq:
                      - id: content
                        terminator: \(hex(d.delimiter[0]))
                        include: true

                """
        case .lengthField(let d):
            return try lengthFrame(id, spec, d)
        }
    }

    private static func lengthFrame(_ id: String, _ spec: DissectorSpec, _ d: LengthFieldDissector) throws(LuaDissectorExport.Unsupported) -> String {
        guard d.preamble.isEmpty else {
            throw LuaDissectorExport.Unsupported(description: "'\(spec.name)' has a preamble (a stream start only it knows); a .ksy describes one frame layout")
        }
        guard d.bodyOffset == nil else { throw LuaDissectorExport.Unsupported(description: "'\(spec.name)' sets body=N, which the export does not describe") }
        let variable = d.encoding == .varint || d.encoding == .ber
        let fieldWidth = variable ? 1 : d.lengthFieldLength
        // Header pieces in offset order: (offset, width, YAML lines).
        var pieces: [(offset: Int, width: Int, lines: [String])] = []
        if !d.magic.isEmpty {
            pieces.append((d.magicOffset, d.magic.count, ["- id: magic", "  contents: [\(d.magic.array.map(hex).joined(separator: ", "))]"]))
        }
        if let t = d.typeField {
            var lines = ["- id: msg_type"] + (integerType(t.width, .big).map { ["  type: \($0)"] } ?? ["  size: \(t.width)"])
            if !spec.typeNames.isEmpty && integerType(t.width, .big) != nil { lines.append("  enum: msg_type") }
            pieces.append((t.offset, t.width, lines))
        }
        switch d.encoding {
        case .binary:
            pieces.append((d.lengthFieldOffset, fieldWidth, ["- id: len_raw"] + (integerType(d.lengthFieldLength, d.endianness).map { ["  type: \($0)"] } ?? ["  size: \(d.lengthFieldLength)"])))
        case .ascii, .hex:
            pieces.append((d.lengthFieldOffset, fieldWidth, ["- id: len_raw", "  type: str", "  size: \(d.lengthFieldLength)", "  encoding: ASCII"]))
        case .varint:
            pieces.append((d.lengthFieldOffset, fieldWidth, ["- id: len_raw", "  type: varint"]))
        case .ber:
            pieces.append((d.lengthFieldOffset, fieldWidth, ["- id: len_raw", "  type: ber_length"]))
        }
        pieces.sort { $0.offset < $1.offset }
        var seq: [String] = []
        var at = 0
        for piece in pieces {
            guard piece.offset >= at else {
                throw LuaDissectorExport.Unsupported(description: "'\(spec.name)': header fields overlap at offset \(piece.offset)")
            }
            if variable && piece.offset > d.lengthFieldOffset {
                throw LuaDissectorExport.Unsupported(description: "'\(spec.name)': a field after a \(d.encoding.rawValue) length has no fixed offset")
            }
            if piece.offset > at { seq += ["- id: header_\(at)", "  size: \(piece.offset - at)"] }
            seq += piece.lines
            at = piece.offset + piece.width
        }
        // Frame length = where the field ends + value + adjust (Netty's rule); the header ends at `at`.
        let fieldEnd: String, headerEnd: String
        switch d.encoding {
        case .varint:
            fieldEnd = "\(d.lengthFieldOffset) + len_raw.groups.size"
            headerEnd = fieldEnd
        case .ber:
            fieldEnd = "\(d.lengthFieldOffset) + 1 + len_raw.rest.size"
            headerEnd = fieldEnd
        default:
            fieldEnd = "\(d.lengthFieldOffset + d.lengthFieldLength)"
            headerEnd = "\(at)"
        }
        var frameLength = "\(fieldEnd) + length_value + \(d.lengthAdjustment)"
        if d.headerOnlyBelow > 0 { frameLength = "length_value < \(d.headerOnlyBelow) ? \(fieldEnd) : \(frameLength)" }
        if !d.bodyMagic.isEmpty {
            seq += ["- id: body_magic", "  contents: [\(d.bodyMagic.array.map(hex).joined(separator: ", "))]"]
        }
        seq += ["- id: body", "  size: frame_length - (\(headerEnd)) - \(d.bodyMagic.count)"]
        var notes = ["frame length = \(d.lengthFieldOffset) (offset) + \(variable ? "the field's own width" : "\(d.lengthFieldLength) (width)") + value + \(d.lengthAdjustment) (adjust)"]
        if d.minFrameLength > 0 { notes.append("a frame is at least \(d.minFrameLength) bytes (framescope calls shorter ones malformed)") }
        if d.maxFrameLength != 16 << 20 { notes.append("a frame is at most \(d.maxFrameLength) bytes") }
        if d.encoding == .ascii { notes.append("the length is decimal digits, possibly with leading spaces") }
        var out = header(id, spec, doc: notes.joined(separator: "; ") + ".")
        out += "types:\n  frame:\n    seq:\n" + seq.map { "      \($0)\n" }.joined()
        out += "    instances:\n"
        out += "      length_value:\n        value: \(lengthValue(d))\n"
        out += "      frame_length:\n        value: '\(frameLength)'\n"
        if d.encoding == .varint {
            out += """
                  varint:
                    seq:
                      - id: groups
                        type: u1
                        repeat: until
                        repeat-until: _ < 0x80
                    instances:
                      value:
                        value: '\((0..<5).map { i in i == 0 ? "(groups[0] & 0x7f)" : "(groups.size > \(i) ? (groups[\(i)] & 0x7f) << \(7 * i) : 0)" }.joined(separator: " | "))'

                """
        }
        if d.encoding == .ber {
            out += """
                  ber_length:
                    seq:
                      - id: first
                        type: u1
                      - id: rest
                        size: 'first >= 0x80 ? first & 0x7f : 0'
                    instances:
                      value:
                        value: 'first < 0x80 ? first : rest.size == 1 ? rest[0] : rest.size == 2 ? (rest[0] << 8) | rest[1] : rest.size == 3 ? (rest[0] << 16) | (rest[1] << 8) | rest[2] : (rest[0] << 24) | (rest[1] << 16) | (rest[2] << 8) | rest[3]'

                """
        }
        if let t = d.typeField, !spec.typeNames.isEmpty, integerType(t.width, .big) != nil {
            out += "enums:\n  msg_type:\n" + spec.typeNames.sorted { $0.key < $1.key }.map { "    \($0.key): \(enumName($0.value))\n" }.joined()
        }
        return out
    }

    /// The length field's value as a Kaitai expression.
    private static func lengthValue(_ d: LengthFieldDissector) -> String {
        switch d.encoding {
        case .binary:
            guard integerType(d.lengthFieldLength, d.endianness) == nil else { return "len_raw" }
            let order = d.endianness == .big ? Array(0..<d.lengthFieldLength) : Array((0..<d.lengthFieldLength).reversed())
            return "'" + order.enumerated().map { shift, i in
                let bits = 8 * (d.lengthFieldLength - 1 - shift)
                return bits == 0 ? "len_raw[\(i)]" : "(len_raw[\(i)] << \(bits))"
            }.joined(separator: " | ") + "'"
        case .ascii: return "len_raw.to_i"
        case .hex: return "len_raw.to_i(16)"
        case .varint, .ber: return "len_raw.value"
        }
    }

    private static func header(_ id: String, _ spec: DissectorSpec, doc: String) -> String {
        """
        # Kaitai Struct description of \(spec.name), written by `framescope export --format kaitai`.
        # framescope SPEC: \(spec.text)
        # A TCP stream (one direction, reassembled, e.g. by `framescope extract`) is `frames`, one after another.
        meta:
          id: \(id)
          title: \(spec.name.replacing("'", with: "")) (framescope)
          endian: be
        doc: |
          \(doc)
        seq:
          - id: frames
            type: frame
            repeat: eos

        """
    }

    /// Kaitai's integer type for a width, when it has one.
    private static func integerType(_ width: Int, _ endian: LengthFieldDissector.Endianness) -> String? {
        switch width {
        case 1: "u1"
        case 2, 4, 8: "u\(width)\(endian == .big ? "be" : "le")"
        default: nil
        }
    }

    private static func hex(_ byte: UInt8) -> String { "0x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16) }

    /// A Kaitai enum name: lower-case letters, digits and underscores, starting with a letter.
    private static func enumName(_ name: String) -> String {
        var out = String(name.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
        if out.first.map({ !$0.isLetter }) ?? true { out = "t_" + out }
        return out
    }
}
