import FramescopeCore
import FramescopeReport

#if canImport(Glibc)
import Glibc
#endif

/// `--messages FILE`: one JSON line per message, as the analyzer completes them.
final class MessageWriter {
    private let path: String
    private let fd: Int32
    private var writer: JSONWriter

    init(path: String) throws {
        self.path = path
        fd = try createFile(path)
        writer = JSONWriter(fd: fd, layout: .lines)
    }

    func write(_ message: MessageRecord) {
        message.write(to: &writer)
    }

    func close() throws {
        writer.flush()
        Glibc.close(fd)
        if writer.failed { throw Failure(message: "\(path): write failed") }
    }
}

@available(*, unavailable)
extension MessageWriter: Sendable {}
