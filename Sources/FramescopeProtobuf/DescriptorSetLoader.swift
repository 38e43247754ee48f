import FoundationEssentials  // FileManager
import FramescopeCore

/// Reads a `protoc --descriptor_set_out=SET.pb --include_imports` file into the schema the body
/// scanner uses: every message and enum type of every file, fields resolved to type indices.
public enum DescriptorSetLoader {
    public struct LoadError: Error, CustomStringConvertible {
        public var description: String
    }

    public static func load(path: String, message: String, countBy: String?) throws -> ProtobufSchema {
        guard let data = FileManager.default.contents(atPath: path) else { throw LoadError(description: "\(path): cannot read the descriptor set") }
        let set: DescriptorSet
        do {
            set = try DescriptorSet(bytes: [UInt8](data))
        } catch {
            throw LoadError(description: "\(path): not a descriptor set (make one with protoc --descriptor_set_out=FILE --include_imports): \(error)")
        }
        guard !set.files.isEmpty else { throw LoadError(description: "\(path): the descriptor set holds no .proto files") }
        var schema = try compile(set, root: message, path: path)
        if let countBy {
            do { try schema.countBy(fieldPath: countBy) } catch { throw LoadError(description: "--count-by \(countBy): \(error)") }
        }
        return schema
    }

    private struct Named<T> {
        var fullName: String
        var proto: T
        var checksUTF8: Bool
    }

    static func compile(_ set: DescriptorSet, root: String, path: String) throws -> ProtobufSchema {
        var messages: [Named<DescriptorSet.Message>] = []
        var enums: [Named<DescriptorSet.EnumType>] = []
        func collect(_ type: DescriptorSet.Message, scope: String, utf8: Bool) {
            let name = scope + "." + type.name
            messages.append(Named(fullName: name, proto: type, checksUTF8: utf8))
            for e in type.enums { enums.append(Named(fullName: name + "." + e.name, proto: e, checksUTF8: utf8)) }
            for nested in type.nested { collect(nested, scope: name, utf8: utf8) }
        }
        for file in set.files {
            let scope = file.package.isEmpty ? "" : "." + file.package
            // proto2 strings are not checked by the libraries; proto3 and editions' are.
            let utf8 = file.syntax == "proto3" || file.syntax == "editions"
            for type in file.messages { collect(type, scope: scope, utf8: utf8) }
            for e in file.enums { enums.append(Named(fullName: scope + "." + e.name, proto: e, checksUTF8: utf8)) }
        }
        let messageIndex = Dictionary(messages.enumerated().map { ($0.element.fullName, $0.offset) }, uniquingKeysWith: { a, _ in a })
        let enumIndex = Dictionary(enums.enumerated().map { ($0.element.fullName, $0.offset) }, uniquingKeysWith: { a, _ in a })

        var compiled: [ProtobufSchema.MessageType] = []
        for m in messages {
            var fields: [ProtobufSchema.Field] = []
            for f in m.proto.fields {
                var field = ProtobufSchema.Field(
                    number: UInt32(f.number), name: f.name, kind: .varint, repeated: f.label == .repeated, required: f.label == .required)
                switch f.kind {
                case .double, .fixed64, .sfixed64: field.kind = .fixed64
                case .float, .fixed32, .sfixed32: field.kind = .fixed32
                case .string: field.kind = m.checksUTF8 ? .string : .bytes
                case .bytes: field.kind = .bytes
                case .message, .group:
                    guard let index = messageIndex[f.typeName] else { throw unresolved(f.typeName, in: m.fullName, path: path) }
                    field.kind = f.kind == .group ? .group : .message
                    field.messageType = index
                case .enum:
                    guard let index = enumIndex[f.typeName] else { throw unresolved(f.typeName, in: m.fullName, path: path) }
                    field.enumType = index
                default: field.kind = .varint
                }
                fields.append(field)
            }
            compiled.append(ProtobufSchema.MessageType(name: String(m.fullName.dropFirst()), fields: fields))
        }
        let wanted = root.hasPrefix(".") ? root : "." + root
        guard let rootIndex = messageIndex[wanted] else {
            let near = messages.map { String($0.fullName.dropFirst()) }.filter { $0.hasSuffix("." + root) || $0 == root }
            let hint = near.isEmpty ? "it has: " + messages.prefix(12).map { String($0.fullName.dropFirst()) }.joined(separator: ", ") : "did you mean \(near[0])?"
            throw LoadError(description: "\(path): no message type \(root); \(hint)")
        }
        return ProtobufSchema(
            messages: compiled,
            enums: enums.map { e in
                ProtobufSchema.EnumType(name: String(e.fullName.dropFirst()), values: e.proto.values.map { ($0.number, $0.name) })
            },
            root: rootIndex)
    }

    private static func unresolved(_ typeName: String, in message: String, path: String) -> LoadError {
        LoadError(description: "\(path): \(message.dropFirst()) uses \(typeName.dropFirst()), which is not in the set (compile with protoc --include_imports)")
    }
}
