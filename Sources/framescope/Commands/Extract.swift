import ArgumentParser
import FramescopeCore
import FramescopeReport

#if canImport(Glibc)
import Glibc
#endif

extension Framescope {
    struct Extract: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "extract",
            abstract: "Write each direction's reassembled byte stream to a file, with an index of gaps.",
            discussion: """
                Files are named <connection id>-<from ip.port>-<to ip.port>.bin. DIR/index.json lists, per \
                stream, its byte count, file name and gap map (framescope.extract/1, docs/json-schemas.md). \
                Gaps are not filled: a file holds the captured bytes in order; the gap map says where \
                bytes are missing.
                """)

        @OptionGroup var input: InputOptions
        @OptionGroup(title: "Reassembly limits") var limits: LimitOptions

        @Option(name: .long, help: ArgumentHelp("Directory to write the streams to (created if missing).", valueName: "dir"))
        var out: String

        func run() throws {
            try makeDirectories(out)
            var pipeline = try CapturePipeline(input: input, limits: limits, sink: StreamExtractor(directory: out))
            let errors = pipeline.run()
            let extractor = pipeline.sink
            let index = extractor.index
            try writeJSON(to: out + "/index.json") { index.write(to: &$0) }
            for problem in extractor.writeErrors { writeError("framescope: \(problem)\n") }
            let files = index.streams.filter { $0.file != nil }.count
            let bytes = index.streams.reduce(Int64(0)) { $0 + $1.bytes }
            let gaps = index.streams.reduce(0) { $0 + $1.gaps.count }
            print("wrote \(files) stream files (\(bytes) bytes, \(gaps) gaps) and index.json to \(out)")
            if !extractor.writeErrors.isEmpty { throw ExitCode(1) }
            try finish(with: errors)
        }
    }
}
