import FramescopeCore

#if canImport(Glibc)
import Glibc
#endif

/// tcpdump's `-C`, `-W` and `-G`: when `--write` moves on to a new file, and what it is called.
public struct SavefileRotation: Sendable, Equatable {
    /// `-C`: a new file once the current one holds more than this many bytes (checked before each
    /// packet, so a file exceeds it by at most one packet).
    public var fileSize: Int64?
    /// `-W`: with `-C`, the files are a ring of this many (numbered from 0, overwritten in turn);
    /// with `-G` alone, the capture stops after this many files.
    public var fileCount: Int?
    /// `-G`: a new file on the first packet this many seconds after the current one was opened;
    /// the name is a strftime(3) pattern of that time.
    public var seconds: Int?

    public init(fileSize: Int64? = nil, fileCount: Int? = nil, seconds: Int? = nil) {
        self.fileSize = fileSize
        self.fileCount = fileCount
        self.seconds = seconds
    }

    public var rotates: Bool { fileSize != nil || seconds != nil }

    /// tcpdump's `-C` argument: millions of bytes, or KiB/MiB/GiB with a k, m or g suffix.
    public static func parseFileSize(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["k": 1 << 10, "m": 1 << 20, "g": 1 << 30]
        var digits = Substring(text), unit: Int64 = 1_000_000
        if let last = text.last, let scale = units[Character(last.lowercased())] {
            digits = digits.dropLast()
            unit = scale
        }
        guard let count = Int64(digits), count > 0, count <= Int64.max / unit else { return nil }
        return count * unit
    }

    /// Digits of a file's number in a `-W` ring: tcpdump's getWflagChars (`-W 10` → 1, `-W 11` → 2).
    var numberWidth: Int {
        guard fileSize != nil, var x = fileCount.map({ $0 - 1 }) else { return 0 }
        var width = 0
        while x > 0 {
            width += 1
            x /= 10
        }
        return width
    }

    /// tcpdump's MakeFilename: the pattern through strftime (with `-G`), then the file's number,
    /// zero-padded to `numberWidth`, unless it is the first file with no width.
    func fileName(_ pattern: String, number: Int, openedAt time: Int) -> String {
        var name = pattern
        if seconds != nil {
            var t = time_t(time), local = tm()
            localtime_r(&t, &local)
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let length = strftime(&buffer, buffer.count, pattern, &local)
            if length > 0 { name = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        }
        let width = numberWidth
        if number == 0 && width == 0 { return name }
        let digits = String(number)
        return name + String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

/// `watch --write`: packets saved as they are captured, in one file or rotated as tcpdump does.
/// Each file is written under a temporary name and renamed when it is closed (OutputFile), so a
/// killed capture leaves no half-written file under a final name.
final class RotatingSavefile {
    private let handle: PcapHandle
    private let pattern: String
    private let rotation: SavefileRotation
    private var current: PcapDumper?
    private var bytes: Int64 = 0
    private var openedAt = 0
    private var sizeNumber = 0
    private var filesOpened = 0
    /// Files closed and named, in the order they were written (a ring names one again).
    private(set) var written: [String] = []
    /// `-G` with `-W` and no `-C`: the last file is closed; the capture should stop.
    private(set) var isComplete = false

    init(handle: PcapHandle, pattern: String, rotation: SavefileRotation, now: Int) throws(CaptureError) {
        self.handle = handle
        self.pattern = pattern
        self.rotation = rotation
        try open(at: now)
    }

    private func open(at time: Int) throws(CaptureError) {
        openedAt = time
        let path = rotation.rotates ? rotation.fileName(pattern, number: sizeNumber, openedAt: time) : pattern
        let file: OutputFile
        do { file = try OutputFile(path) } catch { throw CaptureError.cannotWrite(path: path, message: error.reason) }
        switch handle.openDump(file) {
        case .success(let dumper): current = dumper
        case .failure(let failure): throw CaptureError.cannotWrite(path: path, message: failure.message)
        }
        bytes = 24  // the savefile header
        filesOpened += 1
    }

    private func closeCurrent() throws(CaptureError) {
        guard let dumper = current else { return }
        current = nil
        do { try dumper.close() } catch { throw CaptureError.cannotWrite(path: error.path, message: error.reason) }
        if !written.contains(dumper.path) { written.append(dumper.path) }
    }

    /// Writes one packet, first moving to the next file where `-G` or `-C` says so.
    func write(_ header: PacketHeader, _ packet: UnsafeRawBufferPointer) throws(CaptureError) {
        guard !isComplete else { return }
        let now = Int(header.timestamp.nanoseconds / 1_000_000_000)
        if let seconds = rotation.seconds, now - openedAt >= seconds {
            try closeCurrent()
            if rotation.fileSize == nil, let count = rotation.fileCount, filesOpened >= count {
                isComplete = true
                return
            }
            sizeNumber = 0
            try open(at: now)
        }
        if let limit = rotation.fileSize, bytes > limit {
            try closeCurrent()
            sizeNumber += 1
            if let count = rotation.fileCount, sizeNumber >= count { sizeNumber = 0 }
            try open(at: openedAt)
        }
        current?.write(header, packet)
        bytes += 16 + Int64(header.captureLength)
    }

    /// Flushes and names the file being written.
    func close() throws(CaptureError) { try closeCurrent() }
}
