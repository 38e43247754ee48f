/// The part of `google/protobuf/descriptor.proto` the body check needs, decoded from the bytes
/// `protoc --descriptor_set_out` writes: packages, syntax, message types with their fields and
/// nested types, enum types with their values. Other fields are skipped as unknown fields are.
///
/// Decoded here rather than through SwiftProtobuf: that library pulled all of Foundation into the
/// binary (9 MB more resident memory on every run) for these few fields.
struct DescriptorSet {
    struct File {
        var package = ""
        var syntax = ""
        var messages: [Message] = []
        var enums: [EnumType] = []
    }

    struct Message {
        var name = ""
        var fields: [Field] = []
        var nested: [Message] = []
        var enums: [EnumType] = []
    }

    struct Field {
        enum Label: UInt64 { case optional = 1, required, repeated }
        /// descriptor.proto's `FieldDescriptorProto.Type` numbers.
        enum Kind: UInt64 {
            case double = 1, float, int64, uint64, int32, fixed64, fixed32, bool, string, group, message, bytes, uint32, `enum`,
                sfixed32, sfixed64, sint32, sint64
        }
        var name = ""
        var number: Int32 = 0
        var label = Label.optional
        /// TYPE_DOUBLE when absent, the proto2 default.
        var kind = Kind.double
        /// Fully qualified (`.package.Type`) for messages, groups and enums.
        var typeName = ""
    }

    struct EnumType {
        var name = ""
        var values: [(number: Int32, name: String)] = []
    }

    struct DecodingError: Error, CustomStringConvertible {
        var description: String
    }

    var files: [File] = []

    /// A set holds nothing but its files (field 1): anything else at the top is no descriptor set.
    init(bytes: [UInt8]) throws {
        var reader = WireReader(bytes[...])
        while let (field, wire) = try reader.nextTag() {
            guard field == 1, wire == 2 else { throw DecodingError(description: "field \(field) (wire type \(wire)) at the top level") }
            files.append(try Self.file(reader.bytes()))
        }
    }

    private static func file(_ bytes: ArraySlice<UInt8>) throws -> File {
        var file = File(), reader = WireReader(bytes)
        while let (field, wire) = try reader.nextTag() {
            switch (field, wire) {
            case (2, 2): file.package = try reader.string()
            case (4, 2): file.messages.append(try message(reader.bytes()))
            case (5, 2): file.enums.append(try enumType(reader.bytes()))
            case (12, 2): file.syntax = try reader.string()
            default: try reader.skip(wire)
            }
        }
        return file
    }

    private static func message(_ bytes: ArraySlice<UInt8>) throws -> Message {
        var message = Message(), reader = WireReader(bytes)
        while let (field, wire) = try reader.nextTag() {
            switch (field, wire) {
            case (1, 2): message.name = try reader.string()
            case (2, 2): message.fields.append(try self.field(reader.bytes()))
            case (3, 2): message.nested.append(try self.message(reader.bytes()))
            case (4, 2): message.enums.append(try enumType(reader.bytes()))
            default: try reader.skip(wire)
            }
        }
        return message
    }

    private static func field(_ bytes: ArraySlice<UInt8>) throws -> Field {
        var field = Field(), reader = WireReader(bytes)
        while let (number, wire) = try reader.nextTag() {
            switch (number, wire) {
            case (1, 2): field.name = try reader.string()
            case (3, 0): field.number = Int32(truncatingIfNeeded: try reader.varint())
            case (4, 0):
                let value = try reader.varint()
                guard let label = Field.Label(rawValue: value) else { throw DecodingError(description: "field label \(value)") }
                field.label = label
            case (5, 0):
                let value = try reader.varint()
                guard let kind = Field.Kind(rawValue: value) else { throw DecodingError(description: "field type \(value)") }
                field.kind = kind
            case (6, 2): field.typeName = try reader.string()
            default: try reader.skip(wire)
            }
        }
        return field
    }

    private static func enumType(_ bytes: ArraySlice<UInt8>) throws -> EnumType {
        var type = EnumType(), reader = WireReader(bytes)
        while let (field, wire) = try reader.nextTag() {
            switch (field, wire) {
            case (1, 2): type.name = try reader.string()
            case (2, 2):
                var value = (number: Int32(0), name: ""), inner = WireReader(try reader.bytes())
                while let (field, wire) = try inner.nextTag() {
                    switch (field, wire) {
                    case (1, 2): value.name = try inner.string()
                    case (2, 0): value.number = Int32(truncatingIfNeeded: try inner.varint())
                    default: try inner.skip(wire)
                    }
                }
                type.values.append(value)
            default: try reader.skip(wire)
            }
        }
        return type
    }
}

/// Protobuf wire format over a byte slice: tags, varints, length-delimited fields, skipping.
private struct WireReader {
    private let data: ArraySlice<UInt8>
    private var position: Int

    init(_ data: ArraySlice<UInt8>) {
        self.data = data
        position = data.startIndex
    }

    typealias Error = DescriptorSet.DecodingError

    /// The next field number and wire type; nil at the end.
    mutating func nextTag() throws -> (field: UInt64, wire: UInt64)? {
        guard position < data.endIndex else { return nil }
        let tag = try varint()
        guard tag >> 3 > 0 else { throw Error(description: "field number 0 at byte \(position - data.startIndex)") }
        return (tag >> 3, tag & 7)
    }

    mutating func varint() throws -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 70, by: 7) {
            guard position < data.endIndex else { throw Error(description: "a varint cut off at the end") }
            let byte = data[position]
            position += 1
            value |= UInt64(byte & 0x7f) << UInt64(shift)
            if byte < 0x80 { return value }
        }
        throw Error(description: "a varint longer than 10 bytes")
    }

    mutating func bytes() throws -> ArraySlice<UInt8> {
        let length = try varint()
        guard length <= UInt64(data.endIndex - position) else {
            throw Error(description: "a field of \(length) bytes with \(data.endIndex - position) left")
        }
        defer { position += Int(length) }
        return data[position..<position + Int(length)]
    }

    mutating func string() throws -> String { String(decoding: try bytes(), as: UTF8.self) }

    mutating func skip(_ wire: UInt64) throws {
        switch wire {
        case 0: _ = try varint()
        case 1: try advance(8)
        case 2: _ = try bytes()
        case 5: try advance(4)
        default: throw Error(description: "wire type \(wire)")
        }
    }

    private mutating func advance(_ count: Int) throws {
        guard data.endIndex - position >= count else { throw Error(description: "a fixed field cut off at the end") }
        position += count
    }
}
