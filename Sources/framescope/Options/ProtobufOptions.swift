import ArgumentParser
import FramescopeCore
import FramescopeProtobuf

/// How message bodies are checked as protobuf: by a schema from a descriptor set, else as
/// wire data (by default on varint-delimited connections only).
struct ProtobufOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Decode message bodies with this schema: a protoc descriptor set (protoc --descriptor_set_out=FILE --include_imports).",
            valueName: "file.pb"))
    var protoDescriptor: String?

    @Option(help: ArgumentHelp("The message type every body is (with --proto-descriptor), e.g. chat.Envelope.", valueName: "type"))
    var message: String?

    @Option(help: ArgumentHelp("Count valid bodies by this integer or enum field (dotted for nested fields, e.g. header.cmd).", valueName: "field"))
    var countBy: String?

    @Flag(
        inversion: .prefixedNo,
        help: ArgumentHelp(
            "Check that message bodies are well-formed protobuf wire data.",
            discussion: "By default on for connections framed with varint (writeDelimitedTo), off for the rest."))
    var checkProtobuf: Bool?

    func validate() throws {
        if protoDescriptor != nil && message == nil { throw ValidationError("--proto-descriptor needs --message TYPE (the type every body is)") }
        if protoDescriptor == nil && (message != nil || countBy != nil) {
            throw ValidationError("--message and --count-by need --proto-descriptor FILE")
        }
        if protoDescriptor != nil && checkProtobuf == false { throw ValidationError("--no-check-protobuf contradicts --proto-descriptor") }
    }

    /// The check for `choice`: nil when nothing is to be checked.
    func check(for choice: DissectorChoice) throws -> ProtobufCheck? {
        let specs = [choice.byDefault].compactMap { $0 } + Array(choice.byServerPort.values)
        if let protoDescriptor, let message {
            do {
                let schema = try DescriptorSetLoader.load(path: protoDescriptor, message: message, countBy: countBy)
                if !specs.contains(where: \.hasBody) {
                    throw ValidationError("--proto-descriptor: no --dissector has bodies to decode (use varint or length:…)")
                }
                return ProtobufCheck(schema: schema, scope: .lengthFramed)
            } catch let error as DescriptorSetLoader.LoadError {
                throw ValidationError(error.description)
            }
        }
        switch checkProtobuf {
        case true?: return ProtobufCheck(schema: nil, scope: .lengthFramed)
        case false?: return nil
        case nil: return specs.contains(where: \.isVarintDelimited) ? ProtobufCheck(schema: nil, scope: .varintDelimited) : nil
        }
    }
}
