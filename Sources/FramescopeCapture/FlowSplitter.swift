import FramescopeCore

/// `framescope split --by-flow N`: cuts captures into N pcap files, every packet of a connection in
/// the same one — shard `connectionHash % N`, a fixed hash of the 4-tuple that both directions
/// share — and packets that are not TCP over IP in the first. Beside each shard its frame index
/// keeps every record's original frame number, so a shard's reports name the original frames.
///
/// The shards together hold every record read, in the original order within each; timestamps
/// keep their nanoseconds. A pcap holds one link type, so inputs must share theirs.
public struct FlowSplitter {
    public struct Shard {
        public var path: String
        public var packets = 0
        public var bytes = 0
    }

    public private(set) var shards: [Shard]

    private var dumpers: [PcapDumper] = []
    private var indexes: [FrameIndexWriter] = []
    private var linkType: LinkType?
    private var problem: ExportError?

    /// Shard `k` of `count` is `directory/shard-k.pcap` (`k` zero-padded to three digits or more).
    public init(count: Int, directory: String) {
        let width = max(3, String(count - 1).count)
        shards = (0..<count).map { k in
            let digits = String(k)
            return Shard(path: directory + "/shard-" + String(repeating: "0", count: width - digits.count) + digits + ".pcap")
        }
    }

    /// The shard a packet goes to.
    public static func shard(of packet: UnsafeRawBufferPointer, linkType: LinkType, count: Int) -> Int {
        guard case .tcp(let segment) = PacketDecoder.decode(packet, linkType: linkType) else { return 0 }
        return Int(segment.connectionHash % UInt64(count))
    }

    /// Reads every input through `reader` into the shards and names them; returns the inputs'
    /// read errors (the shards then hold what was read before the break). Throws, leaving no
    /// shard, when a shard cannot be written or the inputs' link types differ.
    public mutating func split(_ reader: inout CaptureReader, concurrently: Bool) throws -> [CaptureError] {
        func take(_ info: CaptureInfo, _ bytes: UnsafeRawBufferPointer) { write(info, bytes) }
        if concurrently { reader.readConcurrently(take) } else { reader.read(take) }
        if let problem { throw problem }
        if dumpers.isEmpty {
            guard let linkType = reader.files.lazy.compactMap(\.linkType).first else { return reader.errors }  // nothing opened
            try open(linkType: linkType)
        }
        for (dumper, index) in zip(dumpers, indexes) {
            try dumper.close()
            try index.close()
        }
        return reader.errors
    }

    private mutating func write(_ info: CaptureInfo, _ bytes: UnsafeRawBufferPointer) {
        guard problem == nil else { return }
        if linkType != info.linkType {
            guard linkType == nil else {
                problem = ExportError(
                    message: "frame \(info.frame) has link type \(info.linkType), the first frame \(linkType!): a pcap holds one; split one input at a time")
                return
            }
            do { try open(linkType: info.linkType) } catch {
                problem = error as? ExportError ?? ExportError(message: "\(error)")
                return
            }
        }
        let k = Self.shard(of: bytes, linkType: info.linkType, count: shards.count)
        guard indexes[k].append(info.frame) else {
            // Inputs numbered by indexes of their own (shards of one capture) can interleave.
            problem = ExportError(message: "frame \(info.frame) comes after a higher one: split inputs whose frame numbers rise (a capture, or one shard at a time)")
            return
        }
        dumpers[k].write(PacketHeader(info), bytes)
        shards[k].packets += 1
        shards[k].bytes += info.captureLength
    }

    private mutating func open(linkType: LinkType) throws {
        self.linkType = linkType
        for shard in shards {
            dumpers.append(try openSavefile(shard.path, linkType: linkType.rawValue))
            indexes.append(try FrameIndexWriter(path: FrameIndex.path(for: shard.path)))
        }
    }
}
