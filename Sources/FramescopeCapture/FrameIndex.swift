import FramescopeCore

#if canImport(Glibc)
import Glibc
#endif

/// The frame numbers a capture's records had in the capture it was cut from (`framescope split`),
/// kept beside it as `CAPTURE.frames`, so that a shard's reports name the original frames and
/// reports of shards can be merged.
///
/// Format: the 8 bytes `FSFRAMES`, the record count as a little-endian UInt64, then one LEB128
/// varint per record: its frame number less the previous record's (the first less 0). Numbers
/// only grow, so most records take one byte.
public enum FrameIndex {
    static let magic: [UInt8] = Array("FSFRAMES".utf8)
    static let headerSize = 16

    /// Where the index of the capture at `path` lives.
    public static func path(for capture: String) -> String { capture + ".frames" }
}

/// Writes a frame index as records are cut, under a temporary name until `close()`.
public final class FrameIndexWriter {
    private let file: OutputFile
    private var buffer: [UInt8] = []
    private var previous: UInt64 = 0
    public private(set) var count: UInt64 = 0
    private var failed = false

    public init(path: String) throws(OutputFileError) {
        file = try OutputFile(path)
        buffer.reserveCapacity(1 << 16)
        buffer += FrameIndex.magic
        buffer += [UInt8](repeating: 0, count: 8)  // the count, written at close
    }

    /// Adds the next record's frame number; false (and nothing added) when it does not grow, as
    /// the numbers of one capture always do.
    public func append(_ frame: UInt64) -> Bool {
        guard frame > previous else { return false }
        var delta = frame - previous
        previous = frame
        count += 1
        while delta >= 0x80 {
            buffer.append(UInt8(truncatingIfNeeded: delta) | 0x80)
            delta >>= 7
        }
        buffer.append(UInt8(delta))
        if buffer.count >= 1 << 16 { flush() }
        return true
    }

    private func flush() {
        if !failed { failed = !buffer.withUnsafeBytes { file.write($0) } }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes what is left, the count, and gives the file its name.
    public func close() throws(OutputFileError) {
        flush()
        var count = count.littleEndian
        let wrote = withUnsafeBytes(of: &count) { pwrite(file.fd, $0.baseAddress, 8, 8) }
        guard !failed && wrote == 8 else {
            file.discard()
            throw OutputFileError(path: file.path, reason: "write failed")
        }
        try file.commit()
    }
}

/// Reads a frame index record by record, with a fixed buffer (an index of 100 million records
/// is read in 64 KiB steps).
public final class FrameIndexReader {
    public let path: String
    /// Records the index says it holds.
    public let count: UInt64
    public private(set) var read: UInt64 = 0
    /// The first record's frame number, once read.
    public private(set) var first: UInt64?
    /// Whether `next()` has come to the end (or a break) of the index.
    public private(set) var ended = false
    private let fd: Int32
    private var buffer: UnsafeMutableRawBufferPointer
    private var start = 0, end = 0
    private var frame: UInt64 = 0

    /// Opens the index at `path`; nil when there is none, an error when it is no frame index.
    public static func open(_ path: String) throws(CaptureError) -> FrameIndexReader? {
        let fd = Glibc.open(path, O_RDONLY)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw .cannotOpen(path: path, message: "cannot open the frame index: \(String(cString: strerror(errno)))")
        }
        var header = [UInt8](repeating: 0, count: FrameIndex.headerSize)
        let n = header.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, FrameIndex.headerSize) }
        guard n == FrameIndex.headerSize, Array(header[0..<8]) == FrameIndex.magic else {
            close(fd)
            throw .cannotOpen(path: path, message: "not a framescope frame index (it has no FSFRAMES header)")
        }
        let count = header[8..<16].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return FrameIndexReader(path: path, fd: fd, count: count)
    }

    private init(path: String, fd: Int32, count: UInt64) {
        self.path = path
        self.fd = fd
        self.count = count
        buffer = .allocate(byteCount: 1 << 16, alignment: 8)
    }

    deinit {
        buffer.deallocate()
        close(fd)
    }

    /// The next record's original frame number; nil when the index ends (or breaks) first.
    public func next() -> UInt64? {
        guard let frame = decodeNext() else {
            ended = true
            return nil
        }
        if first == nil { first = frame }
        return frame
    }

    private func decodeNext() -> UInt64? {
        guard read < count else { return nil }
        var delta: UInt64 = 0, shift: UInt64 = 0
        while true {
            if start == end && !refill() { return nil }
            let byte = buffer[start]
            start += 1
            guard shift < 64 else { return nil }
            delta |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { break }
            shift += 7
        }
        guard delta > 0 else { return nil }
        let (sum, overflow) = frame.addingReportingOverflow(delta)
        guard !overflow else { return nil }
        frame = sum
        read += 1
        return frame
    }

    private func refill() -> Bool {
        let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
        guard n > 0 else { return false }
        (start, end) = (0, n)
        return true
    }
}
