import ArgumentParser
import FramescopeCore

extension MessageExport.Kind: ExpressibleByArgument {}

/// How `--export-messages` writes them.
enum ExportFormat: String, ExpressibleByArgument, CaseIterable {
    /// The frames that carried them, as captured.
    case frames
    /// One Wireshark "exported PDU" record (link type 252) per message: its bytes alone.
    case pdu
}

/// `analyze --export-messages`: the frames that carried chosen messages, as a pcap to hand on.
struct ExportMessagesOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Also write the frames that carried the selected messages, as captured, to this pcap.",
            discussion: "Frames keep their bytes and times; Wireshark's frame numbers restart at 1 in the new file.",
            valueName: "file.pcap"))
    var exportMessages: String?

    @Option(
        help: ArgumentHelp(
            "Which to export: all (every message), partial, merged (segments with several messages) or malformed; repeat to combine.",
            valueName: "kind"))
    var exportOnly: [MessageExport.Kind] = []

    @Option(
        help: ArgumentHelp(
            "frames: the frames that carried the messages, as captured; pdu: each message's bytes as a Wireshark exported-PDU record (link type 252).",
            valueName: "format"))
    var exportFormat: ExportFormat = .frames

    @Option(help: ArgumentHelp("Only this connection's messages (its ID in the report).", valueName: "id"))
    var exportConnection: Int?

    @Option(help: ArgumentHelp("Only messages of this type: a name from the protocol file or preset, or a number; repeatable.", valueName: "type"))
    var exportType: [String] = []

    func validate() throws {
        guard let exportMessages else {
            if !exportOnly.isEmpty || exportConnection != nil || !exportType.isEmpty || exportFormat != .frames {
                throw ValidationError("--export-only, --export-format, --export-connection and --export-type need --export-messages FILE.pcap")
            }
            return
        }
        if exportFormat == .pdu && !Set(exportOnly).isSubset(of: [.all, .partial]) {
            throw ValidationError("--export-format pdu writes messages: --export-only all or partial (merged segments and malformed headers are frames)")
        }
        do { try OutputFile.check(exportMessages) } catch { throw ValidationError("--export-messages: \(error)") }
    }

    /// The selection, with type names resolved against the SPECs in use (either direction's names).
    func selection(for choice: DissectorChoice) throws -> MessageExport? {
        guard exportMessages != nil else { return nil }
        var types: Set<UInt64>?
        if !exportType.isEmpty {
            let specs = [choice.byDefault].compactMap { $0 } + Array(choice.byServerPort.values)
            types = []
            for name in exportType {
                let named = specs.flatMap { spec in
                    (Array(spec.typeNames(fromClient: true)) + Array(spec.typeNames(fromClient: false))).filter { $0.value == name }.map(\.key)
                }
                guard let values = named.isEmpty ? UInt64(name).map({ [$0] }) : named else {
                    throw ValidationError("--export-type \(name): no such type name in \(specs.map(\.name).joined(separator: ", ")); give a name or a number")
                }
                types!.formUnion(values)
            }
        }
        var selection = MessageExport(kinds: exportOnly.isEmpty ? [.all] : Set(exportOnly), connection: exportConnection, types: types)
        selection.recordsMessages = exportFormat == .pdu
        return selection
    }
}
