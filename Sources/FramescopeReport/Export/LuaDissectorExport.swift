import FramescopeCore

/// A Wireshark Lua dissector that frames TCP streams as a length-field SPEC does: the same
/// rule (frame = offset + width + value + adjust), the same checks (magic, body magic, min, max,
/// header-only values), every encoding (binary either order, ASCII or hex digits, varint, BER),
/// the type field as a field with the protocol file's names. It reassembles with
/// `pinfo.desegment_offset`/`desegment_len` (a varint or BER length has no fixed size, which
/// `dissect_tcp_pdus` needs) and stops at a malformed header, leaving the rest to TCP's data.
public enum LuaDissectorExport {
    public struct Unsupported: Error, CustomStringConvertible {
        public var description: String
    }

    /// The script, registered on `ports` (and in "Decode As" for any other). Its protocol is
    /// `fs_NAME` in display filters: `name`, else a preset's or protocol file's name, else
    /// `fs_framescope`.
    public static func script(_ spec: DissectorSpec, ports: [UInt16], name: String? = nil) throws(Unsupported) -> String {
        guard case .lengthField(let d) = spec.kind else {
            throw Unsupported(description: "'\(spec.name)' is not a length-field SPEC; only those export to Lua")
        }
        guard d.preamble.isEmpty else {
            throw Unsupported(description: "'\(spec.name)' has a preamble (a stream start only it knows); the Lua export frames without one")
        }
        let id = identifier(name ?? (spec.name == spec.text ? "framescope" : spec.name))
        // Types of up to 4 bytes get the protocol file's names (Wireshark names 32-bit values only).
        let typeField = (d.typeField?.width ?? 0) <= 4
            ? "ProtoField.uint32(\"\(id).type\", \"Type\", base.DEC, {\(typeNames(spec))})" : "ProtoField.uint64(\"\(id).type\", \"Type\", base.DEC)"
        let typeValue = (d.typeField?.width ?? 0) <= 4 ? "uint()" : "uint64()"
        var lua = """
            -- Wireshark dissector for \(spec.name), written by `framescope export --format lua` from the SPEC
            --   \(d.specText)
            -- Load it with: wireshark -X lua_script:THIS_FILE (or copy it to the personal Lua plugins folder).
            -- Display filter: \(id) (fields \(id).length and \(id).type).
            -- Frame length = offset + width + value + adjust (Netty's LengthFieldBasedFrameDecoder rule).

            local proto = Proto("\(id)", "\(luaString(spec.name)) (framescope)")
            local f_length = ProtoField.uint32("\(id).length", "Frame length", base.DEC)
            local f_type = \(typeField)
            proto.fields = { f_length, f_type }

            local OFFSET, WIDTH, ADJUST = \(d.lengthFieldOffset), \(d.lengthFieldLength), \(d.lengthAdjustment)
            local MAX, MIN, HEADER_ONLY_BELOW = \(d.maxFrameLength), \(d.minFrameLength), \(d.headerOnlyBelow)
            local MAGIC, MAGIC_AT = \(bytes(d.magic)), \(d.magicOffset)
            local BODY_MAGIC = \(bytes(d.bodyMagic))
            local TYPE_AT, TYPE_WIDTH = \(d.typeField.map { "\($0.offset), \($0.width)" } ?? "nil, nil")
            local BODY_AT = \(d.bodyOffset.map(String.init) ?? "nil")

            -- Whether `want` (a byte string) is at `at`; nil when the bytes are not there yet.
            local function matches(tvb, at, want)
                if #want == 0 then return true end
                if tvb:len() < at + #want then return nil end
                for i = 1, #want do
                    if tvb(at + i - 1, 1):uint() ~= want:byte(i) then return false end
                end
                return true
            end

            \(lengthReader(d))

            -- The frame at `at`: its length, or nil when more bytes are needed, or -1 when malformed.
            local function frame_length(tvb, at)
                local magic = matches(tvb, at + MAGIC_AT, MAGIC)
                if magic == false then return -1 end
                if magic == nil then return nil end
                local value, field_end = read_length(tvb, at)
                if value == nil then return nil end
                if value < 0 or value > MAX then return -1 end
                local total = field_end + value + ADJUST
                if value < HEADER_ONLY_BELOW then total = field_end end
                if total < math.max(field_end, MIN, MAGIC_AT + #MAGIC) or total <= 0 or total > MAX then return -1 end
                local header = math.max(field_end, MAGIC_AT + #MAGIC, TYPE_AT and TYPE_AT + TYPE_WIDTH or 0)
                local body = math.min(total, BODY_AT or header)
                if #BODY_MAGIC > 0 then
                    if body + #BODY_MAGIC > total then return -1 end
                    local ok = matches(tvb, at + body, BODY_MAGIC)
                    if ok == false then return -1 end
                    if ok == nil then return nil end
                end
                return total
            end

            function proto.dissector(tvb, pinfo, tree)
                local at = 0
                while at < tvb:len() do
                    local n = frame_length(tvb, at)
                    if n == nil then
                        pinfo.desegment_offset = at
                        pinfo.desegment_len = DESEGMENT_ONE_MORE_SEGMENT
                        return tvb:len()
                    end
                    if n < 0 then return at end  -- a malformed header: not this protocol from here
                    if at + n > tvb:len() then
                        pinfo.desegment_offset = at
                        pinfo.desegment_len = at + n - tvb:len()
                        return tvb:len()
                    end
                    pinfo.cols.protocol = "\(id.uppercased())"
                    local item = tree:add(proto, tvb(at, n))
                    item:add(f_length, tvb(at, n), n)
                    if TYPE_AT and TYPE_AT + TYPE_WIDTH <= n then
                        item:add(f_type, tvb(at + TYPE_AT, TYPE_WIDTH), tvb(at + TYPE_AT, TYPE_WIDTH):\(typeValue))
                    end
                    at = at + n
                end
                return at
            end

            local tcp_port = DissectorTable.get("tcp.port")
            tcp_port:add_for_decode_as(proto)

            """
        for port in ports { lua += "tcp_port:add(\(port), proto)\n" }
        return lua
    }

    /// `read_length(tvb, at)`: the length field's value and where it ends, nil when its bytes are not all there.
    static func lengthReader(_ d: LengthFieldDissector) -> String {
        switch d.encoding {
        case .binary:
            let read = d.lengthFieldLength <= 4
                ? (d.endianness == .big ? "uint()" : "le_uint()") : (d.endianness == .big ? "uint64():tonumber()" : "le_uint64():tonumber()")
            return """
                local function read_length(tvb, at)
                    if tvb:len() < at + OFFSET + WIDTH then return nil end
                    return tvb(at + OFFSET, WIDTH):\(read), OFFSET + WIDTH
                end
                """
        case .ascii, .hex:
            return """
                local function read_length(tvb, at)
                    if tvb:len() < at + OFFSET + WIDTH then return nil end
                    local digits = tvb(at + OFFSET, WIDTH):string():match("^ *(\(d.encoding == .ascii ? "%d" : "%x")+)$")
                    if digits == nil then return -1, 0 end
                    return tonumber(digits, \(d.encoding == .ascii ? 10 : 16)), OFFSET + WIDTH
                end
                """
        case .varint:
            return """
                local function read_length(tvb, at)
                    local value, shift = 0, 1
                    for i = 0, 4 do
                        if tvb:len() < at + OFFSET + i + 1 then return nil end
                        local byte = tvb(at + OFFSET + i, 1):uint()
                        value = value + (byte % 128) * shift
                        if byte < 128 then return value, OFFSET + i + 1 end
                        shift = shift * 128
                    end
                    return -1, 0  -- longer than 5 bytes
                end
                """
        case .ber:
            return """
                local function read_length(tvb, at)
                    if tvb:len() < at + OFFSET + 1 then return nil end
                    local first = tvb(at + OFFSET, 1):uint()
                    if first < 128 then return first, OFFSET + 1 end
                    local count = first - 128
                    if count < 1 or count > 4 then return -1, 0 end  -- indefinite (0x80) or too long
                    if tvb:len() < at + OFFSET + 1 + count then return nil end
                    return tvb(at + OFFSET + 1, count):uint(), OFFSET + 1 + count
                end
                """
        }
    }

    /// A Lua identifier from a SPEC's name: `fs_` and lowercase letters, digits and underscores.
    static func identifier(_ name: String) -> String {
        let cleaned = name.lowercased().map { ($0.isLetter && $0.isASCII) || ($0.isNumber && $0.isASCII) ? String($0) : "_" }.joined()
        return "fs_" + String(cleaned.prefix(40))
    }

    static func luaString(_ text: String) -> String {
        text.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"")
    }

    /// A Lua byte string: "\xca\xfe".
    static func bytes(_ b: InlineBytes) -> String {
        "\"" + b.array.map { "\\" + String($0) }.joined() + "\""
    }

    static func typeNames(_ spec: DissectorSpec) -> String {
        spec.typeNames.sorted { $0.key < $1.key }.map { " [\($0.key)] = \"\(luaString($0.value))\"" }.joined(separator: ",") + (spec.typeNames.isEmpty ? "" : " ")
    }
}
