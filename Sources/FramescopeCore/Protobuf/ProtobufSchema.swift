/// A protobuf message type compiled for the body scanner: fields by number with their wire
/// kind, nested types by index. Built from a descriptor set (FramescopeProtobuf) or by hand in
/// tests; plain values, so one schema is shared by every direction without copying.
public struct ProtobufSchema: Sendable, Equatable {
    public enum Kind: UInt8, Sendable {
        /// int32/64, uint32/64, sint32/64, bool, enum.
        case varint
        /// fixed64, sfixed64, double.
        case fixed64
        /// fixed32, sfixed32, float.
        case fixed32
        /// Must hold valid UTF-8 (proto3 and editions' default).
        case string
        /// bytes, or a proto2 string (not checked).
        case bytes
        case message
        case group
    }

    public struct Field: Sendable, Equatable {
        public var number: UInt32
        public var name: String
        public var kind: Kind
        public var repeated: Bool
        public var required: Bool
        /// The nested type for `.message` and `.group`.
        public var messageType: Int?
        /// The enum type for enum fields (names for counting).
        public var enumType: Int?

        public init(
            number: UInt32, name: String, kind: Kind, repeated: Bool = false, required: Bool = false, messageType: Int? = nil,
            enumType: Int? = nil
        ) {
            self.number = number
            self.name = name
            self.kind = kind
            self.repeated = repeated
            self.required = required
            self.messageType = messageType
            self.enumType = enumType
        }
    }

    public struct MessageType: Sendable, Equatable {
        public var name: String
        /// Sorted by number.
        public var fields: [Field]
        /// Bit `i` set when `fields[i]` is required (the first 64 fields).
        var requiredMask: UInt64

        public init(name: String, fields: [Field]) {
            self.name = name
            self.fields = fields.sorted { $0.number < $1.number }
            requiredMask = 0
            for (i, f) in self.fields.prefix(64).enumerated() where f.required { requiredMask |= 1 << UInt64(i) }
        }

        @inline(__always)
        func fieldIndex(_ number: UInt32) -> Int? {
            var low = 0, high = fields.count
            while low < high {
                let mid = (low + high) / 2
                if fields[mid].number < number { low = mid + 1 } else { high = mid }
            }
            return low < fields.count && fields[low].number == number ? low : nil
        }
    }

    public struct EnumType: Sendable, Equatable {
        public var name: String
        /// Declared values in order (the first is proto3's default).
        public var values: [(number: Int32, name: String)]

        public init(name: String, values: [(number: Int32, name: String)]) {
            self.name = name
            self.values = values
        }

        public static func == (a: Self, b: Self) -> Bool {
            a.name == b.name && a.values.map(\.number) == b.values.map(\.number) && a.values.map(\.name) == b.values.map(\.name)
        }
    }

    public var messages: [MessageType]
    public var enums: [EnumType]
    /// The type every body should parse as.
    public var root: Int
    /// Field numbers from the root to the field messages are counted by (a varint or enum in
    /// the root or in singular nested messages), and the names to show.
    public var countBy: (path: [UInt32], name: String, enumType: Int?)?

    public init(messages: [MessageType], enums: [EnumType], root: Int) {
        self.messages = messages
        self.enums = enums
        self.root = root
    }

    public var rootName: String { messages[root].name }

    public static func == (a: Self, b: Self) -> Bool {
        a.messages == b.messages && a.enums == b.enums && a.root == b.root && a.countBy?.path == b.countBy?.path
    }

    public enum CountByError: Error, Equatable, CustomStringConvertible {
        case noSuchField(String, in: String)
        case notAMessage(String)
        case notCountable(String)

        public var description: String {
            switch self {
            case .noSuchField(let name, let type): "\(type) has no field '\(name)'"
            case .notAMessage(let name): "'\(name)' is not a singular message field, so it has no fields to go into"
            case .notCountable(let name): "'\(name)' is not an integer, bool or enum field: messages can only be counted by those"
            }
        }
    }

    /// Sets `countBy` from a dotted field path (`cmd`, `header.command`).
    public mutating func countBy(fieldPath: String) throws(CountByError) {
        var type = root, path: [UInt32] = []
        let names = fieldPath.split(separator: ".").map(String.init)
        for (i, name) in names.enumerated() {
            guard let field = messages[type].fields.first(where: { $0.name == name }) else {
                throw .noSuchField(name, in: messages[type].name)
            }
            path.append(field.number)
            if i < names.count - 1 {
                guard field.kind == .message, !field.repeated, let nested = field.messageType else { throw .notAMessage(name) }
                type = nested
            } else {
                guard field.kind == .varint else { throw .notCountable(name) }
                countBy = (path, fieldPath, field.enumType)
            }
        }
    }

    /// A counted value as text: the enum value's name when there is one.
    public func countLabel(_ value: UInt64) -> String {
        if let e = countBy?.enumType, let v = enums[e].values.first(where: { UInt64(bitPattern: Int64($0.number)) == value }) {
            return v.name
        }
        return String(Int64(bitPattern: value))
    }

    /// The value a body without the counted field has: 0, or an enum's first value.
    var countDefault: UInt64 {
        guard let e = countBy?.enumType, let first = enums[e].values.first else { return 0 }
        return UInt64(bitPattern: Int64(first.number))
    }
}
