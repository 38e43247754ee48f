import FramescopeCore

/// `analyze --export-messages`: copies the selected frames of the inputs, as captured, into a
/// pcap a colleague can open — a second pass over the files through libpcap, numbering frames
/// as `CaptureReader` does (every record counts, across files).
public enum FrameCopier {
    /// Writes the frames in `frames` to `path`; returns how many. The output takes the first
    /// input's link type; an input of another link type is an error (a pcap holds one).
    public static func copy(_ frames: FrameSet, from paths: [String], to path: String) throws -> Int {
        let file = try OutputFile(path)
        var dumper: PcapDumper?
        var linkType: LinkType?
        var frame: UInt64 = 0, copied = 0
        for input in paths {
            let handle: PcapHandle
            switch PcapHandle.openOffline(path: input) {
            case .success(let opened): handle = opened
            case .failure(let failure): throw CaptureError.cannotOpen(path: input, message: failure.message)
            }
            if let linkType, linkType != handle.linkType {
                throw ExportError(message: "\(input): link type \(handle.linkType.rawValue) differs from the first input's \(linkType.rawValue); export from one input at a time")
            }
            linkType = handle.linkType
            if dumper == nil {
                switch handle.openDump(file) {
                case .success(let opened): dumper = opened
                case .failure(let failure): throw ExportError(message: "\(path): \(failure.message)")
                }
            }
            reading: while true {
                let next = handle.next { header, bytes in
                    frame += 1
                    if frames.contains(frame) {
                        dumper?.write(header, bytes)
                        copied += 1
                    }
                }
                switch next {
                case .packet: continue
                case .end, .timeout: break reading
                case .failure: break reading  // the analysis reported where the input broke
                }
            }
        }
        guard let dumper else {
            file.discard()
            throw ExportError(message: "\(path): no input to copy frames from")
        }
        try dumper.close()
        return copied
    }
}

public struct ExportError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// A pcap of Wireshark "exported PDU" records (link type 252, `DLT_WIRESHARK_UPPER_PDU`), written
/// through libpcap on a dead handle.
public final class ExportedPDUFile {
    private let dumper: PcapDumper
    public private(set) var records = 0

    public init(path: String) throws {
        dumper = try openSavefile(path, linkType: 252)
    }

    public func write(_ bytes: [UInt8], at timestamp: Timestamp) {
        let length = bytes.count
        bytes.withUnsafeBytes { dumper.write(PacketHeader(timestamp: timestamp, captureLength: length, originalLength: length), $0) }
        records += 1
    }

    public func close() throws { try dumper.close() }
}

/// A new savefile of `linkType` at `path`, with nanosecond timestamps, under a temporary name
/// until it is closed.
func openSavefile(_ path: String, linkType: Int32) throws -> PcapDumper {
    let file = try OutputFile(path)
    guard let handle = PcapHandle.openDead(linkType: linkType) else {
        file.discard()
        throw ExportError(message: "\(path): libpcap cannot make a handle of link type \(linkType)")
    }
    switch handle.openDump(file) {
    case .success(let dumper): return dumper
    case .failure(let failure):
        file.discard()
        throw ExportError(message: "\(path): \(failure.message)")
    }
}
