import CPcap
import FramescopeCore

#if canImport(Glibc)
import Glibc
#endif

/// The only file that calls libpcap. Everything else sees Swift types.
final class PcapHandle {
    private let handle: OpaquePointer
    /// The file, `-` for standard input, or the interface.
    let path: String
    /// Nanoseconds per unit of `tv_usec`: 1 at nanosecond precision, 1000 where a device
    /// only gives microseconds.
    private(set) var fractionScale: Int64 = 1
    /// Where the last record's data starts in the file, once `locateRecords()` succeeded; else -1.
    private(set) var dataOffset: Int64 = -1
    /// Where the next record starts (-1: not locating), and the file's snapshot length.
    private var nextRecord: Int64 = -1
    private var snapshot: Int64 = 0

    /// The stdio buffer libpcap reads a file through (`readBufferSize`), freed after the handle.
    private let readBuffer: UnsafeMutableRawPointer?

    private init(handle: OpaquePointer, path: String, readBuffer: UnsafeMutableRawPointer? = nil) {
        self.handle = handle
        self.path = path
        self.readBuffer = readBuffer
    }

    deinit {
        pcap_close(handle)
        readBuffer?.deallocate()
    }

    /// libpcap reads a file with `fread` through the stream's buffer, which glibc sizes to the
    /// file system's block: 4 KiB, a `read` system call every few packets (262,000 for 1 GB).
    /// 64 KiB takes 40% off the bare libpcap loop over 1 GB (0.31 → 0.19 s) and still fits the
    /// L2 cache (1 MiB gained less).
    static let readBufferSize = 64 << 10

    /// Opens a pcap or pcapng file (`-` is standard input) with nanosecond timestamps, read
    /// through a `readBufferSize` buffer. A file that cannot be opened goes to libpcap to open,
    /// so that the error is libpcap's own.
    static func openOffline(path: String) -> Result<PcapHandle, PcapFailure> {
        var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE) + 1)
        let stream = path == "-" ? fdopen(0, "rb") : fopen(path, "rb")
        var opened: OpaquePointer?
        var readBuffer: UnsafeMutableRawPointer?
        if let stream {
            // Only the reading thread uses the stream: without this glibc locks it in each of
            // libpcap's two `fread`s a packet once the process has a second thread (atomic
            // writes: `__fread_chk` had 5% of a `-t 2` run's samples on 1 GB, `perf -e cpu-clock`).
            __fsetlocking(stream, Int32(FSETLOCKING_BYCALLER))
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: readBufferSize, alignment: 64)
            if setvbuf(stream, buffer.assumingMemoryBound(to: CChar.self), _IOFBF, readBufferSize) == 0 {
                readBuffer = buffer
            } else {
                buffer.deallocate()
            }
            opened = pcap_fopen_offline_with_tstamp_precision(stream, UInt32(PCAP_TSTAMP_PRECISION_NANO), &errorBuffer)
            if opened == nil {  // (as `pcap_open_offline` does; standard input stays open)
                if path != "-" { fclose(stream) }
                readBuffer?.deallocate()
                readBuffer = nil
            }
        } else {
            opened = pcap_open_offline_with_tstamp_precision(path, UInt32(PCAP_TSTAMP_PRECISION_NANO), &errorBuffer)
        }
        guard let opened else { return .failure(PcapFailure(message: errorBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })) }
        return .success(PcapHandle(handle: opened, path: path, readBuffer: readBuffer))
    }

    var linkType: LinkType { LinkType(rawValue: pcap_datalink(handle)) }

    /// A handle that reads nothing, for writing savefiles of `linkType` with nanosecond
    /// timestamps (`openDump`).
    static func openDead(linkType: Int32) -> PcapHandle? {
        pcap_open_dead_with_tstamp_precision(linkType, 262_144, UInt32(PCAP_TSTAMP_PRECISION_NANO)).map { PcapHandle(handle: $0, path: "") }
    }

    // MARK: Live capture

    /// `pcap_create` + options + `pcap_activate`, nanosecond timestamps where the device has them.
    static func openLive(_ o: LiveCaptureOptions) -> Result<PcapHandle, LiveFailure> {
        var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE) + 1)
        guard let created = pcap_create(o.interface, &errorBuffer) else {
            return .failure(LiveFailure(code: 0, message: errorBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }))
        }
        let handle = PcapHandle(handle: created, path: o.interface)
        pcap_set_snaplen(created, Int32(o.snapLength))
        pcap_set_promisc(created, o.promiscuous ? 1 : 0)
        pcap_set_timeout(created, Int32(o.timeoutMilliseconds))
        pcap_set_immediate_mode(created, o.immediate ? 1 : 0)
        if let size = o.bufferSize { pcap_set_buffer_size(created, Int32(clamping: size)) }
        _ = pcap_set_tstamp_precision(created, Int32(PCAP_TSTAMP_PRECISION_NANO))
        let status = pcap_activate(created)
        if status < 0 {
            let detail = status == PCAP_ERROR ? String(cString: pcap_geterr(created)) : String(cString: pcap_statustostr(status))
            return .failure(LiveFailure(code: status, message: detail))
        }
        handle.fractionScale = pcap_get_tstamp_precision(created) == Int32(PCAP_TSTAMP_PRECISION_NANO) ? 1 : 1000
        // Non-blocking, waited on with poll(): on Linux (TPACKET_V3) a blocking read with no
        // traffic never returns, whatever the timeout.
        pcap_setnonblock(created, 1, &errorBuffer)
        return .success(handle)
    }

    /// Compiles `expression` for this handle and installs it (in the kernel where it can).
    func setFilter(_ expression: String) -> String? {
        var program = bpf_program()
        guard pcap_compile(handle, &program, expression, 1, PCAP_NETMASK_UNKNOWN) == 0 else {
            return String(cString: pcap_geterr(handle))
        }
        defer { pcap_freecode(&program) }
        return pcap_setfilter(handle, &program) == 0 ? nil : String(cString: pcap_geterr(handle))
    }

    /// Packets received and dropped so far (`pcap_stats`).
    func statistics() -> CaptureStatistics? {
        var stats = pcap_stat()
        guard pcap_stats(handle, &stats) == 0 else { return nil }
        return CaptureStatistics(received: Int(stats.ps_recv), kernelDrops: Int(stats.ps_drop), interfaceDrops: Int(stats.ps_ifdrop))
    }

    /// Waits until packets may be ready or `milliseconds` pass (a signal ends the wait too).
    func waitForPackets(milliseconds: Int) {
        let fd = pcap_get_selectable_fd(handle)
        guard fd >= 0 else {
            usleep(useconds_t(milliseconds * 1000))
            return
        }
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, Int32(milliseconds))
    }

    /// A savefile writer for this handle's link type into `file` (`pcap_dump_fopen` on a
    /// duplicate of its descriptor: libpcap closes its own).
    func openDump(_ file: OutputFile) -> Result<PcapDumper, PcapFailure> {
        let copy = dup(file.fd)
        guard copy >= 0, let stream = fdopen(copy, "wb") else {
            let reason = String(cString: strerror(errno))
            if copy >= 0 { close(copy) }
            return .failure(PcapFailure(message: reason))
        }
        guard let dumper = pcap_dump_fopen(handle, stream) else {
            return .failure(PcapFailure(message: String(cString: pcap_geterr(handle))))
        }
        return .success(PcapDumper(dumper: dumper, file: file, fractionScale: fractionScale))
    }

    /// Capture interfaces (`pcap_findalldevs`).
    static func interfaces() -> Result<[CaptureInterface], PcapFailure> {
        var list: UnsafeMutablePointer<pcap_if_t>?
        var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE) + 1)
        guard pcap_findalldevs(&list, &errorBuffer) == 0 else {
            return .failure(PcapFailure(message: errorBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }))
        }
        defer { pcap_freealldevs(list) }
        var result: [CaptureInterface] = []
        var device = list
        while let d = device?.pointee {
            var addresses: [String] = []
            var address = d.addresses
            while let a = address?.pointee {
                if let text = a.addr.flatMap(socketAddressText) { addresses.append(text) }
                address = a.next
            }
            result.append(
                CaptureInterface(
                    name: String(cString: d.name), description: d.description.map { String(cString: $0) },
                    addresses: addresses, isUp: d.flags & UInt32(PCAP_IF_UP) != 0,
                    isRunning: d.flags & UInt32(PCAP_IF_RUNNING) != 0, isLoopback: d.flags & UInt32(PCAP_IF_LOOPBACK) != 0))
            device = d.next
        }
        return .success(result)
    }

    enum Next {
        case packet
        /// Live capture only: the read timeout passed without a packet.
        case timeout
        case end
        case failure(PcapFailure)
    }

    /// Starts noting where each record's data lies (`dataOffset`) when the handle reads a
    /// classic pcap file from a regular file (by path or redirected to standard input), and
    /// returns a descriptor of its own for reading them back (`CaptureFiles`); nil otherwise
    /// (pcapng, pipes, live captures).
    func locateRecords() -> Int32? {
        guard let file = pcap_file(handle) else { return nil }
        let descriptor = fileno(file)
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        // libpcap has read the 24-byte file header: the first record starts here.
        let start = Int64(ftello(file))
        var fileHeader = [UInt8](repeating: 0, count: 24)
        guard start >= 24, pread(descriptor, &fileHeader, 24, off_t(start - 24)) == 24, Self.isClassicPcap(fileHeader) else { return nil }
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { return nil }
        nextRecord = start
        snapshot = Int64(pcap_snapshot(handle))
        return copy
    }

    /// A pcap file header with 16-byte record headers: microsecond or nanosecond, either byte
    /// order, version 2 (not the modified formats whose records are longer).
    static func isClassicPcap(_ header: [UInt8]) -> Bool {
        let little = UInt32(header[0]) | UInt32(header[1]) << 8 | UInt32(header[2]) << 16 | UInt32(header[3]) << 24
        let major: UInt16
        switch little {
        case 0xA1B2_C3D4, 0xA1B2_3C4D: major = UInt16(header[4]) | UInt16(header[5]) << 8
        case 0xD4C3_B2A1, 0x4D3C_B2A1: major = UInt16(header[4]) << 8 | UInt16(header[5])
        default: return false
        }
        return major == 2
    }

    /// Reads the next record with `pcap_next_ex`; its bytes are valid during `body` only.
    func next(_ body: (PacketHeader, UnsafeRawBufferPointer) -> Void) -> Next {
        var header: UnsafeMutablePointer<pcap_pkthdr>?
        var data: UnsafePointer<UInt8>?
        switch pcap_next_ex(handle, &header, &data) {
        case 1:
            let h = header!.pointee
            locateRecord(captureLength: Int64(h.caplen))
            let packetHeader = PacketHeader(
                timestamp: Timestamp(seconds: Int64(h.ts.tv_sec), nanoseconds: Int64(h.ts.tv_usec) * fractionScale),
                captureLength: Int(h.caplen), originalLength: Int(h.len))
            body(packetHeader, UnsafeRawBufferPointer(start: data, count: Int(h.caplen)))
            return .packet
        case 0:
            return .timeout
        case PCAP_ERROR_BREAK:
            return .end
        default:
            return .failure(PcapFailure(message: String(cString: pcap_geterr(handle))))
        }
    }

    /// The record read starts at `nextRecord`, its data 16 bytes on. libpcap reports a record
    /// longer than the file's snapshot length cut to it (and skips the rest): only then does
    /// the file position (`ftello`, a system call) tell where the next record starts.
    private func locateRecord(captureLength: Int64) {
        guard nextRecord >= 0 else {
            dataOffset = -1
            return
        }
        dataOffset = nextRecord + 16
        if captureLength == snapshot, let file = pcap_file(handle) {
            nextRecord = Int64(ftello(file))  // (-1 if it fails: locating stops after this record)
        } else {
            nextRecord = dataOffset + captureLength
        }
    }

    /// Byte position in the file, for "where it broke" messages (nil for standard input).
    var fileOffset: Int64? {
        guard path != "-", let file = pcap_file(handle) else { return nil }
        let position = ftello(file)
        return position >= 0 ? Int64(position) : nil
    }
}

/// Writes packets to a pcap savefile (`pcap_dump`).
final class PcapDumper {
    private let dumper: OpaquePointer
    private let file: OutputFile
    private var closed = false
    /// As the handle's: the savefile has the handle's timestamp precision.
    private let fractionScale: Int64

    var path: String { file.path }

    init(dumper: OpaquePointer, file: OutputFile, fractionScale: Int64) {
        self.dumper = dumper
        self.file = file
        self.fractionScale = fractionScale
    }

    /// Without `close()` (an error on the way): the file is dropped, the previous one kept.
    deinit { if !closed { pcap_dump_close(dumper) } }

    /// Flushes and closes the savefile and gives it its name.
    func close() throws(OutputFileError) {
        closed = true
        let flushed = pcap_dump_flush(dumper) == 0
        pcap_dump_close(dumper)
        guard flushed else {
            file.discard()
            throw OutputFileError(path: file.path, reason: "write failed")
        }
        try file.commit()
    }

    func write(_ header: PacketHeader, _ bytes: UnsafeRawBufferPointer) {
        var h = pcap_pkthdr()
        let (seconds, fraction) = header.timestamp.nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        h.ts.tv_sec = Int(seconds)
        h.ts.tv_usec = Int(fraction / fractionScale)
        h.caplen = UInt32(header.captureLength)
        h.len = UInt32(header.originalLength)
        pcap_dump(UnsafeMutableRawPointer(dumper).assumingMemoryBound(to: UInt8.self), &h, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self))
    }

    func flush() { pcap_dump_flush(dumper) }
}

/// `ip` or `[ipv6]` text of a sockaddr, nil for other families.
private func socketAddressText(_ address: UnsafeMutablePointer<sockaddr>) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
    switch Int32(address.pointee.sa_family) {
    case AF_INET:
        return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { a in
            var ip = a.pointee.sin_addr
            return inet_ntop(AF_INET, &ip, &buffer, socklen_t(buffer.count)).map { String(cString: $0) }
        }
    case AF_INET6:
        return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { a in
            var ip = a.pointee.sin6_addr
            return inet_ntop(AF_INET6, &ip, &buffer, socklen_t(buffer.count)).map { String(cString: $0) }
        }
    default:
        return nil
    }
}

/// A record header, as libpcap or the pcapng fallback reader reports it.
struct PacketHeader {
    var timestamp: Timestamp
    var captureLength: Int
    var originalLength: Int
}

extension PacketHeader {
    /// The record header of a packet as read (to write it again as captured).
    init(_ info: CaptureInfo) {
        self.init(timestamp: info.timestamp, captureLength: info.captureLength, originalLength: info.originalLength)
    }
}

struct PcapFailure: Error {
    var message: String
}

struct LiveFailure: Error {
    /// libpcap's status code (`PCAP_ERROR_PERM_DENIED`, …).
    var code: Int32
    var message: String

    var isPermissionDenied: Bool { code == PCAP_ERROR_PERM_DENIED || code == PCAP_ERROR_PROMISC_PERM_DENIED }
    var isNoSuchDevice: Bool { code == PCAP_ERROR_NO_SUCH_DEVICE }
    var isInterfaceDown: Bool { code == PCAP_ERROR_IFACE_NOT_UP }
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
