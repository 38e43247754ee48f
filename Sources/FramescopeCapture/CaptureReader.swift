import FramescopeCore

/// What was read from one input file.
public struct CaptureFileSummary: Sendable {
    public var path: String
    public var packets = 0
    public var firstFrame: UInt64 = 0
    /// "libpcap", or "libpcap+pcapng-fallback" when framescope's pcapng reader finished the file.
    public var reader = "libpcap"
    public var error: CaptureError?
    /// The IANA time zone a pcapng file names for its interfaces (`if_iana_tzname`), if any.
    public var timeZone: String?
    /// The frame index beside the file (`FILE.frames`, written by `framescope split`) whose
    /// original frame numbers its records carry, if there was one.
    public var frameIndex: String?
    /// The file's link type, once opened.
    public var linkType: LinkType?
}

/// Reads capture files in order through libpcap, numbering frames across them, applying the
/// BPF filter and the packet count.
public struct CaptureReader {
    public var paths: [String]
    public var filter: PacketFilter?
    /// Stop after this many packets that pass the filter (tcpdump's `-c`).
    public var packetLimit: Int?
    /// Asked before each packet: true ends the reading there (a pass that has what it came for
    /// need not read the rest of a large capture).
    public var isDone: (() -> Bool)?
    public private(set) var files: [CaptureFileSummary] = []
    /// Called now and then with (file index, bytes read so far) for progress display.
    public var progress: ((Int, Int64) -> Void)?
    /// Where packets can be read back: each classic pcap file read is added to it (input
    /// numbers are the files' places in `paths`), and its packets carry their locations.
    public var captureFiles: CaptureFiles?

    private var frame: UInt64 = 0
    private var accepted = 0
    /// The current file's frame index: its records are numbered as in the capture it was cut from.
    private var index: FrameIndexReader?

    public init(paths: [String], filter: PacketFilter? = nil, packetLimit: Int? = nil) {
        self.paths = paths
        self.filter = filter
        self.packetLimit = packetLimit
    }

    public var errors: [CaptureError] { files.compactMap(\.error) }

    /// Reads every file, calling `body` for each packet that passes the filter. A file that
    /// breaks stops only itself; its error is kept in `files`.
    public mutating func read(_ body: (CaptureInfo, UnsafeRawBufferPointer) -> Void) {
        for (number, path) in paths.enumerated() {
            if limitReached { break }
            var summary = CaptureFileSummary(path: path, firstFrame: frame + 1)
            summary.timeZone = PcapngTimeZone.read(path: path)
            summary.error = readFile(path, number: number, summary: &summary, body)
            files.append(summary)
        }
    }

    private var limitReached: Bool { packetLimit.map { accepted >= $0 } ?? false || isDone?() == true }

    private mutating func readFile(
        _ path: String, number: Int, summary: inout CaptureFileSummary,
        _ body: (CaptureInfo, UnsafeRawBufferPointer) -> Void
    ) -> CaptureError? {
        let handle: PcapHandle
        switch PcapHandle.openOffline(path: path) {
        case .success(let opened): handle = opened
        case .failure(let failure): return .cannotOpen(path: path, message: failure.message)
        }
        let linkType = handle.linkType
        summary.linkType = linkType
        if let captureFiles, let descriptor = handle.locateRecords() { captureFiles.adopt(descriptor, input: number) }
        var packets = 0
        if let failure = openIndex(beside: path, summary: &summary) { return failure }
        defer {
            if let first = index?.first { summary.firstFrame = first }
            index = nil
        }
        while !limitReached {
            let next = handle.next { header, bytes in
                // (-1 unless the handle locates its records: `locateRecords()` above.)
                let location = handle.dataOffset >= 0 ? CaptureLocation(input: number, offset: handle.dataOffset) : .unknown
                deliver(header, linkType: linkType, bytes: bytes, location: location, body)
            }
            switch next {
            case .packet:
                packets += 1
                if index?.ended == true { return indexMismatch(path, packets: packets, summary: &summary) }
                if packets & 0xFFFF == 0, let progress, let offset = handle.fileOffset { progress(number, offset) }
            case .end, .timeout:  // an offline handle never times out
                summary.packets = packets
                if let index, index.read < index.count { return indexMismatch(path, packets: packets, summary: &summary) }
                return nil
            case .failure(let failure):
                summary.packets = packets
                if Self.needsPcapngFallback(failure.message) {
                    summary.reader = "libpcap+pcapng-fallback"
                    return resumeWithPcapngReader(path, skipping: packets, summary: &summary, body)
                }
                return .broken(path: path, message: failure.message, packetsRead: packets, lastFrame: frame, byteOffset: handle.fileOffset)
            }
        }
        summary.packets = packets
        return nil
    }

    /// Opens `FILE.frames` when it is there; an index that cannot be read stops the file (its
    /// frame numbers would be wrong).
    private mutating func openIndex(beside path: String, summary: inout CaptureFileSummary) -> CaptureError? {
        guard path != "-" else { return nil }
        do {
            index = try FrameIndexReader.open(FrameIndex.path(for: path))
        } catch {
            return error
        }
        summary.frameIndex = index?.path
        return nil
    }

    private func indexMismatch(_ path: String, packets: Int, summary: inout CaptureFileSummary) -> CaptureError {
        summary.packets = packets
        let count = index?.count ?? 0
        return .broken(
            path: path, message: "its frame index \(FrameIndex.path(for: path)) holds \(count) records, the capture \(packets)\(index?.ended == true ? " or more" : ""): they do not belong together",
            packetsRead: packets, lastFrame: frame, byteOffset: nil)
    }

    /// libpcap 1.10 stops at a pcapng interface whose link type or snapshot length differs
    /// from the first interface's.
    static func needsPcapngFallback(_ message: String) -> Bool {
        message.contains("different from the") && message.contains("first interface")
    }

    private mutating func resumeWithPcapngReader(
        _ path: String, skipping alreadyRead: Int, summary: inout CaptureFileSummary,
        _ body: (CaptureInfo, UnsafeRawBufferPointer) -> Void
    ) -> CaptureError? {
        guard var reader = PcapngBlockReader(path: path) else {
            return .broken(path: path, message: "cannot reopen for the pcapng reader", packetsRead: alreadyRead, lastFrame: frame, byteOffset: nil)
        }
        defer { reader.close() }
        var seen = 0
        while !limitReached {
            let next = reader.next { header, linkType, bytes in
                seen += 1
                if seen > alreadyRead { deliver(header, linkType: linkType, bytes: bytes, body) }
            }
            switch next {
            case .packet:
                if index?.ended == true { return indexMismatch(path, packets: seen, summary: &summary) }
            case .end:
                summary.packets = max(seen, alreadyRead)
                return nil
            case .failure(let message):
                summary.packets = max(seen, alreadyRead)
                return .broken(path: path, message: message, packetsRead: summary.packets, lastFrame: frame, byteOffset: reader.fileOffset)
            }
        }
        summary.packets = max(seen, alreadyRead)
        return nil
    }

    private mutating func deliver(
        _ header: PacketHeader, linkType: LinkType, bytes: UnsafeRawBufferPointer, location: CaptureLocation = .unknown,
        _ body: (CaptureInfo, UnsafeRawBufferPointer) -> Void
    ) {
        frame += 1  // every record counts, filtered or not, as in Wireshark
        var number = frame
        if let index {
            guard let original = index.next() else { return }  // the mismatch is reported by the caller
            number = original
        }
        if let filter, !filter.matches(bytes, header: header, linkType: linkType) { return }
        accepted += 1
        var info = CaptureInfo(
            frame: number, timestamp: header.timestamp, linkType: linkType, captureLength: header.captureLength, originalLength: header.originalLength)
        info.location = location
        body(info, bytes)
    }
}
