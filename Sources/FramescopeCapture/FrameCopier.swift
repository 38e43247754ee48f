import FramescopeCore

/// `analyze --export-messages`: copies the selected frames of the inputs, as captured, into a
/// pcap a colleague can open — a second pass over the files through `CaptureReader`, which numbers
/// frames as the analysis did (every record counts, across files; a shard's by its frame index).
public enum FrameCopier {
    /// Writes the frames in `frames` to `path`; returns how many. The output takes the first
    /// frame's link type; a frame of another link type is an error (a pcap holds one).
    public static func copy(_ frames: FrameSet, from paths: [String], to path: String) throws -> Int {
        var reader = CaptureReader(paths: paths)
        var dumper: PcapDumper?
        var linkType: LinkType?
        var copied = 0
        var problem: Error?
        reader.read { info, bytes in
            guard problem == nil, frames.contains(info.frame) else { return }
            if linkType == nil {
                linkType = info.linkType
                do { dumper = try openSavefile(path, linkType: info.linkType.rawValue) } catch { problem = error }
            } else if info.linkType != linkType {
                problem = ExportError(message: "frame \(info.frame) has link type \(info.linkType), the first frame \(linkType!): export from one input at a time")
            }
            guard problem == nil, let dumper else { return }
            dumper.write(PacketHeader(info), bytes)
            copied += 1
        }
        if let problem { throw problem }  // (the dumper's file is dropped with it)
        if dumper == nil {  // no frame selected: an empty savefile of the first input's link type
            guard let first = reader.files.lazy.compactMap(\.linkType).first else {
                throw ExportError(message: "\(path): no input to copy frames from")
            }
            dumper = try openSavefile(path, linkType: first.rawValue)
        }
        try dumper!.close()
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
