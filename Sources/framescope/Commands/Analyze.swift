import ArgumentParser
import FramescopeCapture
import FramescopeCore
import FramescopeReport
import Foundation

extension Framescope {
    struct Analyze: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Cut every TCP stream into messages and show how TCP split and glued them.",
            discussion: """
                Reports per direction: messages, partial messages (bytes in ≥ 2 segments), merged segments \
                (bytes of ≥ 2 messages), the messages a one-read-one-message receiver would lose, malformed \
                headers, messages cut off at the end and damaged by capture gaps, with the frame numbers and \
                bytes to find each problem in Wireshark. Definitions: README.md; JSON schema \
                framescope.report/1: docs/json-schemas.md.
                """)

        @OptionGroup var input: InputOptions
        @OptionGroup var dissectors: DissectorOptions
        @OptionGroup(title: "Protobuf bodies") var protobuf: ProtobufOptions
        @OptionGroup(title: "Reassembly limits") var limits: LimitOptions

        @OptionGroup(title: "Output") var out: OutputOptions
        @OptionGroup(title: "CI gates") var gates: FailOnOptions

        @Option(help: ArgumentHelp("Also write one JSON line per message to this file.", valueName: "file.ndjson"))
        var messages: String?

        @Option(help: "Connections listed in the report at most; older finished ones are only counted in the totals.")
        var maxListedConnections = 100_000

        @Option(help: ArgumentHelp("Bytes all resynchronisation windows may hold together.", valueName: "size"))
        var maxResyncMemory: ByteSize = ByteSize(32 << 20)

        func validate() throws {
            if maxListedConnections < 1 { throw ValidationError("--max-listed-connections must be at least 1") }
            if dissectors.dissector.isEmpty {
                throw ValidationError("give --dissector SPEC (e.g. varint, lines, preset:tls, length:offset=0,width=4)")
            }
        }

        func run() throws {
            var choice = try dissectors.choiceOrExit()
            if dissectors.wantsAuto {
                var filter: PacketFilter?
                if let expression = input.filter {
                    do { filter = try PacketFilter(expression: expression) } catch { throw ValidationError(error.description) }
                }
                for (port, spec) in try inferDissectors(files: input.files, filter: filter, options: limits.reassembly)
                where choice.byServerPort[port] == nil {
                    choice.byServerPort[port] = spec
                }
            }
            var analyzer = Analyzer(choice: choice, protobuf: try protobuf.check(for: choice), maxResyncWindowBytes: maxResyncMemory.bytes)
            analyzer.maxRetainedConnections = maxListedConnections
            let writer = try messages.map { try MessageWriter(path: $0) }
            if let writer { analyzer.onMessage = { writer.write($0) } }
            var pipeline = try Pipeline(input: input, limits: limits, sink: SinkPair(analyzer, FlowsCollector(retainSummaries: false)))
            let errors = pipeline.run()
            try writer?.close()
            let sinks = pipeline.sink
            let flows = FlowsReport(collector: sinks.second, decode: pipeline.decodeStatistics, context: pipeline.context, inputs: pipeline.inputs)
            let report = AnalysisReport(analyzer: sinks.first, flows: flows, choice: choice)
            try out.write(report)
            try finish(with: errors)
            try gates.check(report)
        }
    }
}

/// `--messages`: one JSON object per line, written through a 64 KiB buffer.
final class MessageWriter {
    private let handle: FileHandle
    private var buffer: [UInt8] = []

    init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw Failure(message: "\(path): cannot write")
        }
        self.handle = handle
        buffer.reserveCapacity(1 << 16)
    }

    func write(_ m: MessageRecord) {
        var line = "{\"connection\":\(m.connection.rawValue),\"direction\":\"\(m.direction)\",\"offset\":\(m.offset),\"length\":\(m.length)"
        line += ",\"type\":\(m.type.map(String.init) ?? "null"),\"firstFrame\":\(m.firstFrame),\"lastFrame\":\(m.lastFrame)"
        line += ",\"segments\":\(m.segments),\"firstTime\":\"\(m.firstTimestamp.epochString)\",\"lastTime\":\"\(m.lastTimestamp.epochString)\"}\n"
        buffer.append(contentsOf: line.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    private func flush() {
        handle.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }

    func close() throws {
        flush()
        try handle.close()
    }
}

@available(*, unavailable)
extension MessageWriter: Sendable {}
