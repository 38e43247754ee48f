import FramescopeCore
import FramescopeReport

#if canImport(Glibc)
import Glibc
#endif

/// `--messages FILE`: one JSON line per message, as the analyzer completes them.
final class MessageWriter {
    private let path: String
    private let file: OutputFile
    private var writer: JSONWriter

    init(path: String) throws {
        self.path = path
        file = try createFile(path)
        writer = JSONWriter(fd: file.fd, layout: .lines)
    }

    func write(_ message: MessageRecord) {
        message.write(to: &writer)
    }

    func close() throws {
        writer.flush()
        if writer.failed { throw Failure(message: "\(path): write failed") }
        try commit(file)
    }
}

@available(*, unavailable)
extension MessageWriter: Sendable {}
