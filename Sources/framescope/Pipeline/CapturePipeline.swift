import ArgumentParser
import FramescopeCapture
import FramescopeCore
import FramescopeReport

#if canImport(Glibc)
import Glibc
#endif

/// Capture files → packet decoding → flow table → reassembly → `sink`. With two threads libpcap
/// reads on a second thread; packets reach the flow table in the same order, so the results are
/// identical; that thread decodes them too. (Measured: also moving reassembly there was slower —
/// the copies of every chunk and event cost more than the split saved.)
struct CapturePipeline<Sink: StreamSink> {
    var sink: Sink
    var reader: CaptureReader
    let threads: Int
    let options: ReassemblyOptions
    /// After `run`: what the flow table counted.
    private(set) var decodeStatistics = DecodeStatistics()
    private(set) var context: ReassemblyContext

    init(input: InputOptions, limits: LimitOptions, sink: Sink) throws {
        let filter = try input.packetFilter()
        self.sink = sink
        options = limits.reassembly
        context = ReassemblyContext(options: limits.reassembly)
        reader = CaptureReader(paths: input.files, filter: filter, packetLimit: input.count)
        reader.captureFiles = CaptureFiles(inputs: input.files.count)
        threads = input.threads
        if !input.quiet && isatty(2) != 0 { reader.progress = Progress(paths: input.files).show }
    }

    /// Reads everything, finalizes all connections, and returns the read errors.
    mutating func run() -> [CaptureError] {
        var table = FlowTable(sink: sink, options: options, captureFiles: reader.captureFiles)
        if threads > 1 {
            reader.readDecodedConcurrently { info, packet in table.process(packet, info: info) }
        } else {
            reader.read { info, bytes in table.process(bytes, info: info) }
        }
        table.finish()
        (sink, decodeStatistics, context) = (table.sink, table.decodeStatistics, table.context)
        if reader.progress != nil { writeError("\r\u{1B}[K") }
        return reader.errors
    }

    var inputs: [FlowsReport.Input] { reader.inputs }
}

extension CaptureReader {
    /// What was read from each file, as a report lists it.
    var inputs: [FlowsReport.Input] {
        files.map {
            FlowsReport.Input(
                path: $0.path, packets: $0.packets, firstFrame: $0.firstFrame, reader: $0.reader, error: $0.error?.description, timeZone: $0.timeZone,
                frameIndex: $0.frameIndex)
        }
    }
}

/// An error already worded for the user, with its exit status.
struct Failure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// "reading FILE: 42%" on standard error for large files.
struct Progress {
    let sizes: [Int64]
    let paths: [String]

    init(paths: [String]) {
        self.paths = paths
        sizes = paths.map { path in
            var info = stat()
            return path != "-" && stat(path, &info) == 0 ? Int64(info.st_size) : 0
        }
    }

    func show(file: Int, offset: Int64) {
        guard sizes[file] > 64 << 20 else { return }
        let percent = offset * 100 / sizes[file]
        writeError("\rreading \(paths[file]): \(percent)% of \(sizes[file] >> 20) MiB")
    }
}

/// Writes to standard output or to `--output FILE` (complete, or not at all: see OutputFile).
func emit(_ text: String, to path: String?) throws {
    guard let path else {
        print(text, terminator: "")
        return
    }
    let file = try createFile(path)
    var text = text
    guard text.withUTF8({ file.write(UnsafeRawBufferPointer($0)) }) else { throw Failure(message: "\(path): write failed") }
    try commit(file)
}

/// Creates `path` under a temporary name (renamed by `commit`), or says why it cannot.
func createFile(_ path: String) throws -> OutputFile {
    do { return try OutputFile(path) } catch { throw Failure(message: "\(error)") }
}

/// Gives a finished output file its name.
func commit(_ file: OutputFile) throws {
    do { try file.commit() } catch { throw Failure(message: "\(error)") }
}

/// Where a JSON document goes: standard output, or `path` under its temporary name until
/// `complete` gives it its name.
struct JSONDestination {
    let file: OutputFile?

    init(_ path: String?) throws { file = try path.map(createFile) }

    var fd: Int32 { file?.fd ?? 1 }

    /// Names the file, or says that writing it failed.
    func complete(written: Bool) throws {
        guard written else { throw Failure(message: "\(file?.path ?? "standard output"): write failed") }
        if let file { try commit(file) }
    }
}

/// Streams a JSON document to standard output or to `path`.
func writeJSON(to path: String?, layout: JSONWriter.Layout = .pretty, _ body: (inout JSONWriter) -> Void) throws {
    let destination = try JSONDestination(path)
    var writer = JSONWriter(fd: destination.fd, layout: layout)
    body(&writer)
    writer.finish()
    try destination.complete(written: !writer.failed)
}

/// A JSON report written to its destination as the analysis runs (`ReportStream`).
struct StreamedReport {
    let destination: JSONDestination
    let stream: ReportStream

    func finish(_ report: AnalysisReport) throws { try destination.complete(written: report.finish(stream)) }
}

/// When no input could be opened at all: the error lines say why, and exit 1 without a report
/// (an empty one would only hide them).
func exitIfNothingOpened(_ errors: [CaptureError], inputs: Int) throws {
    let unopened = errors.filter { if case .cannotOpen = $0 { true } else { false } }.count
    if inputs > 0 && unopened >= inputs { try finish(with: errors) }
}

/// Prints read errors and exits 1 if there were any (after the report was written).
func finish(with errors: [CaptureError]) throws {
    for error in errors { writeError("framescope: \(error)\n") }
    if !errors.isEmpty { throw ExitCode(1) }
}

/// Writes to standard error, unbuffered (no shared `stderr` FILE under strict concurrency).
func writeError(_ text: String) {
    var text = text
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

/// `mkdir -p`.
func makeDirectories(_ path: String) throws {
    var prefix = path.hasPrefix("/") ? "/" : ""
    for part in path.split(separator: "/") {
        prefix += part + "/"
        if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
            throw Failure(message: "\(path): cannot create directory: \(String(cString: strerror(errno)))")
        }
    }
}
