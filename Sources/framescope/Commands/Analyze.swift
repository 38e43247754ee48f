import ArgumentParser
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
        @OptionGroup(title: "Reassembly limits") var limits: LimitOptions

        @Option(help: "Output format.")
        var format: OutputFormat = .text

        @Option(name: [.customShort("o"), .long], help: "Write the report to this file instead of standard output.")
        var output: String?

        @Option(help: ArgumentHelp("Also write one JSON line per message to this file.", valueName: "file.ndjson"))
        var messages: String?

        func validate() throws {
            if dissectors.dissector.isEmpty {
                throw ValidationError("give --dissector SPEC (e.g. varint, lines, preset:tls, length:offset=0,width=4)")
            }
        }

        func run() throws {
            let choice = try dissectors.choiceOrExit()
            var analyzer = Analyzer(choice: choice)
            let writer = try messages.map { try MessageWriter(path: $0) }
            if let writer { analyzer.onMessage = { writer.write($0) } }
            var pipeline = try Pipeline(input: input, limits: limits, sink: Tee(analyzer: analyzer))
            let errors = pipeline.run()
            try writer?.close()
            let tee = pipeline.table.sink
            let flows = FlowsReport(collector: tee.flows, table: pipeline.table, inputs: pipeline.inputs)
            let report = AnalysisReport(analyzer: tee.analyzer, table: pipeline.table, flows: flows, choice: choice)
            switch format {
            case .json: try emit(JSONOutput.encode(report), to: output)
            case .text: try emit(AnalysisTextFormatter.render(report), to: output)
            }
            try finish(with: errors)
        }
    }
}

/// Feeds both the analyzer and the flows collector (for the input and limits sections).
struct Tee: StreamSink {
    var analyzer: Analyzer
    var flows = FlowsCollector()

    mutating func connectionOpened(_ connection: ConnectionInfo) { analyzer.connectionOpened(connection) }
    mutating func data(_ chunk: StreamChunk) { analyzer.data(chunk) }
    mutating func gap(_ gap: StreamGap) {
        analyzer.gap(gap)
        flows.gap(gap)
    }
    mutating func conflict(_ conflict: StreamConflict) { flows.conflict(conflict) }
    mutating func connectionClosed(_ summary: ConnectionSummary) {
        analyzer.connectionClosed(summary)
        flows.connectionClosed(summary)
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
