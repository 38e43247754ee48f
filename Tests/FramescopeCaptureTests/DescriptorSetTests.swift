@testable import FramescopeCore
import FramescopeProtobuf
import Foundation
import Testing

/// framescope decodes protoc's descriptor sets itself: every field it reads from them (name,
/// number, label, type, the type it refers to) equals what protoc prints when it decodes the
/// same set (`protoc --decode=google.protobuf.FileDescriptorSet`), on protobuf's own
/// descriptor.proto (proto2: nested messages and enums, groups none, every label) and type.proto
/// (proto3, with imports).
@Suite struct DescriptorSetTests {
    static let include = "/usr/include"

    func protoc(_ arguments: [String], input: String? = nil) throws -> String {
        let protoc = try #require(
            ["/usr/bin/protoc", "/usr/local/bin/protoc"].first { FileManager.default.isExecutableFile(atPath: $0) },
            "protoc is missing: apt-get install protobuf-compiler (scripts/install-deps --test)")
        let process = Process(), output = Pipe()
        process.executableURL = URL(fileURLWithPath: protoc)
        process.arguments = arguments
        process.standardOutput = output
        if let input { process.standardInput = FileHandle(forReadingAtPath: input) }
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return text
    }

    /// Every `field { … }` block of protoc's text output, in order: its scalar entries by key.
    func fieldBlocks(_ text: String) -> [[String: String]] {
        var blocks: [[String: String]] = [], current: [String: String]?, depth = 0, fieldDepth = -1
        for raw in text.split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasSuffix("{") {
                if line == "field {" && current == nil { current = [:]; fieldDepth = depth }
                depth += 1
            } else if line == "}" {
                depth -= 1
                if depth == fieldDepth, let block = current { blocks.append(block); current = nil; fieldDepth = -1 }
            } else if depth == fieldDepth + 1, current != nil, let colon = line.firstIndex(of: ":") {
                current![String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                    .trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        return blocks
    }

    @Test(arguments: [("google/protobuf/descriptor.proto", "google.protobuf.FileDescriptorSet", false),
                      ("google/protobuf/type.proto", "google.protobuf.Type", true)])
    func everyFieldEqualsWhatProtocDecodes(proto: String, root: String, proto3: Bool) throws {
        let set = scratchDirectory + "framescope-\(UUID().uuidString).pb"
        defer { try? FileManager.default.removeItem(atPath: set) }
        _ = try protoc(["--descriptor_set_out=\(set)", "--include_imports", "-I", Self.include, proto])
        let schema = try DescriptorSetLoader.load(path: set, message: root, countBy: nil)
        let text = try protoc(["--decode=google.protobuf.FileDescriptorSet", "-I", Self.include, "google/protobuf/descriptor.proto"], input: set)
        // The schema keeps each message's fields sorted by number, protoc prints them as declared:
        // compared as one sorted list of every field's description.
        let expected = fieldBlocks(text).map { block -> String in
            let kind: String
            switch block["type"] ?? "" {
            case "TYPE_MESSAGE": kind = "message"
            case "TYPE_GROUP": kind = "group"
            case "TYPE_STRING": kind = proto3 ? "string" : "bytes"
            case "TYPE_BYTES": kind = "bytes"
            case "TYPE_DOUBLE", "TYPE_FIXED64", "TYPE_SFIXED64": kind = "fixed64"
            case "TYPE_FLOAT", "TYPE_FIXED32", "TYPE_SFIXED32": kind = "fixed32"
            default: kind = "varint"
            }
            return [block["name"] ?? "", block["number"] ?? "", block["label"] ?? "", kind, block["type_name"] ?? ""].joined(separator: " ")
        }.sorted()
        let decoded = schema.messages.flatMap(\.fields).map { field -> String in
            let label = field.repeated ? "LABEL_REPEATED" : field.required ? "LABEL_REQUIRED" : "LABEL_OPTIONAL"
            let typeName = field.messageType.map { "." + schema.messages[$0].name } ?? field.enumType.map { "." + schema.enums[$0].name } ?? ""
            return [field.name, String(field.number), label, "\(field.kind)", typeName].joined(separator: " ")
        }.sorted()
        #expect(decoded.count > (proto3 ? 10 : 100))
        #expect(decoded == expected)
        // Enum values, with their numbers (negative ones included, as protoc writes them).
        let valueCount = text.split(separator: "\n").filter { $0.trimmingCharacters(in: .whitespaces) == "value {" }.count
        #expect(schema.enums.map(\.values.count).reduce(0, +) == valueCount)
    }

    @Test func anythingButADescriptorSetIsRefusedWithWhatWasWrong() throws {
        for bytes: [UInt8] in [[0xd4, 0xc3, 0xb2, 0xa1, 0x02, 0x00], [0x0a, 0x05, 0x01], [0x08, 0x01], [0x0a, 0x80]] {
            let path = temporaryFile(bytes, suffix: ".pb")
            defer { try? FileManager.default.removeItem(atPath: path) }
            #expect(throws: DescriptorSetLoader.LoadError.self) { try DescriptorSetLoader.load(path: path, message: "x.Y", countBy: nil) }
        }
    }
}
