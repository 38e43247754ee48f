import CPcap
import FramescopeCore

#if canImport(Glibc)
import Glibc
#endif

/// The only file that calls libpcap. Everything else sees Swift types.
final class PcapHandle {
    private let handle: OpaquePointer
    /// Set when reading standard input; closed by `pcap_close`.
    let path: String

    private init(handle: OpaquePointer, path: String) {
        self.handle = handle
        self.path = path
    }

    deinit { pcap_close(handle) }

    /// Opens a pcap or pcapng file (`-` is standard input) with nanosecond timestamps.
    static func openOffline(path: String) -> Result<PcapHandle, PcapFailure> {
        var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE) + 1)
        let opened: OpaquePointer? =
            path == "-"
            ? pcap_fopen_offline_with_tstamp_precision(fdopen(0, "rb"), UInt32(PCAP_TSTAMP_PRECISION_NANO), &errorBuffer)
            : pcap_open_offline_with_tstamp_precision(path, UInt32(PCAP_TSTAMP_PRECISION_NANO), &errorBuffer)
        guard let opened else { return .failure(PcapFailure(message: errorBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })) }
        return .success(PcapHandle(handle: opened, path: path))
    }

    var linkType: LinkType { LinkType(rawValue: pcap_datalink(handle)) }

    enum Next {
        case packet
        case end
        case failure(PcapFailure)
    }

    /// Reads the next record with `pcap_next_ex`; its bytes are valid during `body` only.
    func next(_ body: (PacketHeader, UnsafeRawBufferPointer) -> Void) -> Next {
        var header: UnsafeMutablePointer<pcap_pkthdr>?
        var data: UnsafePointer<UInt8>?
        switch pcap_next_ex(handle, &header, &data) {
        case 1:
            let h = header!.pointee
            let packetHeader = PacketHeader(
                timestamp: Timestamp(seconds: Int64(h.ts.tv_sec), nanoseconds: Int64(h.ts.tv_usec)),
                captureLength: Int(h.caplen), originalLength: Int(h.len))
            body(packetHeader, UnsafeRawBufferPointer(start: data, count: Int(h.caplen)))
            return .packet
        case PCAP_ERROR_BREAK:
            return .end
        default:
            return .failure(PcapFailure(message: String(cString: pcap_geterr(handle))))
        }
    }

    /// Byte position in the file, for "where it broke" messages (nil for standard input).
    var fileOffset: Int64? {
        guard path != "-", let file = pcap_file(handle) else { return nil }
        let position = ftello(file)
        return position >= 0 ? Int64(position) : nil
    }
}

/// A record header, as libpcap or the pcapng fallback reader reports it.
struct PacketHeader {
    var timestamp: Timestamp
    var captureLength: Int
    var originalLength: Int
}

struct PcapFailure: Error {
    var message: String
}

/// A BPF expression compiled by libpcap, once per link type it meets.
public final class PacketFilter {
    public let expression: String
    private var programs: [(LinkType, bpf_program)] = []

    /// Compiles `expression` for Ethernet at once, so a syntax error is reported before any reading.
    public init(expression: String) throws(CaptureError) {
        self.expression = expression
        _ = try program(for: .ethernet)
    }

    deinit {
        for index in programs.indices { pcap_freecode(&programs[index].1) }
    }

    private func program(for linkType: LinkType) throws(CaptureError) -> Int {
        if let found = programs.firstIndex(where: { $0.0 == linkType }) { return found }
        guard let dead = pcap_open_dead(linkType.rawValue, 262_144) else {
            throw CaptureError.badFilter(expression: expression, message: "libpcap could not open a handle for \(linkType)")
        }
        defer { pcap_close(dead) }
        var program = bpf_program()
        if pcap_compile(dead, &program, expression, 1, PCAP_NETMASK_UNKNOWN) != 0 {
            throw CaptureError.badFilter(expression: expression, message: String(cString: pcap_geterr(dead)))
        }
        programs.append((linkType, program))
        return programs.count - 1
    }

    /// Whether a packet matches (`pcap_offline_filter`). A link type the expression cannot be
    /// compiled for matches nothing.
    func matches(_ bytes: UnsafeRawBufferPointer, header: PacketHeader, linkType: LinkType) -> Bool {
        guard let index = try? program(for: linkType) else { return false }
        var packetHeader = pcap_pkthdr()
        packetHeader.caplen = UInt32(header.captureLength)
        packetHeader.len = UInt32(header.originalLength)
        return withUnsafePointer(to: &programs[index].1) { program in
            pcap_offline_filter(program, &packetHeader, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)) != 0
        }
    }
}

/// The version string of the libpcap framescope runs with.
public var libpcapVersion: String { String(cString: pcap_lib_version()) }
