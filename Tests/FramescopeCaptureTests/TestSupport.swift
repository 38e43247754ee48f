import FramescopeCapture
import FramescopeCore
import FramescopeProtobuf
import Testing
import Foundation

/// Repository root, from this file's location.
/// Where tests write temporary files: one directory per test process, removed when it exits
/// (a failed expectation then leaves nothing behind either).
let scratchDirectory: String = {
    let path = NSTemporaryDirectory() + "framescope-tests-\(getpid())/"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "framescope-tests-\(getpid())/") }
    return path
}()

let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// `../shared/corpus` beside the checkout (FRAMESCOPE_CORPUS overrides), or nil.
let corpusDirectory: URL? = {
    if let path = ProcessInfo.processInfo.environment["FRAMESCOPE_CORPUS"] { return URL(fileURLWithPath: path) }
    let url = repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus")
    return FileManager.default.fileExists(atPath: url.appendingPathComponent("truth").path) ? url : nil
}()

/// A test whose oracle is missing (the corpus, a Python module): under `CI=true` that fails the
/// test, since CI must not pass on what it never checked; elsewhere it says SKIP and why.
func oracleMissing(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
    if ProcessInfo.processInfo.environment["CI"] == "true" {
        Issue.record("\(what) (required under CI=true)", sourceLocation: sourceLocation)
    } else {
        print("SKIP \(what)")
    }
}

/// Hashes every direction's reassembled bytes and records its gaps, keyed by "from>to".
struct HashingSink: StatelessStreamSink {
    struct Stream {
        var hasher = SHA256()
        var bytes: Int64 = 0
        var gaps: [(Int64, Int64)] = []
        var sha256 = ""
    }

    var streams: [String: Stream] = [:]
    var connections = 0
    private var names: [ConnectionID: [String]] = [:]

    mutating func connectionOpened(_ c: ConnectionInfo) {
        connections += 1
        names[c.id] = ["\(c.client)>\(c.server)", "\(c.server)>\(c.client)"]
        for name in names[c.id]! where streams[name] == nil { streams[name] = Stream() }
    }

    mutating func data(_ chunk: StreamChunk) {
        let name = names[chunk.connection]![chunk.direction.rawValue]
        streams[name]!.hasher.update(chunk.bytes)
        streams[name]!.bytes += Int64(chunk.bytes.count)
    }

    mutating func gap(_ gap: StreamGap) {
        streams[names[gap.connection]![gap.direction.rawValue]]!.gaps.append((gap.capturedOffset, gap.length))
    }

    mutating func connectionClosed(_ summary: ConnectionSummary) {
        for name in names[summary.info.id]! { streams[name]!.sha256 = streams[name]!.hasher.finalize() }
    }
}

/// Reads captures through the real pipeline.
func analyze<S: StreamSink>(_ paths: [String], sink: S, filter: String? = nil, options: ReassemblyOptions = ReassemblyOptions()) throws
    -> (table: FlowTable<S>, reader: CaptureReader)
{
    var table = FlowTable(sink: sink, options: options)
    var reader = CaptureReader(paths: paths, filter: try filter.map { try PacketFilter(expression: $0) })
    reader.read { info, bytes in table.process(bytes, info: info) }
    table.finish()
    return (table, reader)
}

/// Writes bytes to a fresh temporary file and returns its path.
func temporaryFile(_ bytes: [UInt8], suffix: String = ".pcap") -> String {
    let path = scratchDirectory + "framescope-\(UUID().uuidString)\(suffix)"
    FileManager.default.createFile(atPath: path, contents: Data(bytes))
    return path
}

/// A .proto of samples/proto compiled by protoc, as a user would, and loaded as framescope does.
func compileSampleSchema(_ proto: String, message: String, countBy: String?) throws -> ProtobufSchema {
    let protoc = try #require(
        ["/usr/bin/protoc", "/usr/local/bin/protoc"].first { FileManager.default.isExecutableFile(atPath: $0) },
        "protoc is missing: apt-get install protobuf-compiler (scripts/install-deps --test)")
    let out = scratchDirectory + "framescope-\(UUID().uuidString).pb"
    defer { try? FileManager.default.removeItem(atPath: out) }
    let directory = repositoryRoot.appendingPathComponent("samples/proto").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: protoc)
    process.arguments = ["--descriptor_set_out=\(out)", "--include_imports", "-I", directory, directory + "/" + proto]
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    return try DescriptorSetLoader.load(path: out, message: message, countBy: countBy)
}
