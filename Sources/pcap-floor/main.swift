// The speed floor for the benchmark: a bare pcap_next_ex loop over a capture, touching every
// packet's length and first byte and nothing more. Prints packets and bytes read. With a size
// in KiB, libpcap reads through a stdio buffer of that size (framescope reads through 64 KiB;
// plain `pcap_open_offline`, as tcpdump and tshark, through the file system's block).
import CPcap

#if canImport(Glibc)
import Glibc
#endif

func fail(_ message: String, _ status: Int32) -> Never {
    var text = message + "\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(status)
}

let arguments = CommandLine.arguments
guard arguments.count == 2 || (arguments.count == 3 && Int(arguments[2]) != nil) else { fail("usage: pcap-floor FILE [BUFFER_KIB]", 64) }
var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE) + 1)
let opened: OpaquePointer?
if arguments.count == 3, let stream = fopen(arguments[1], "rb") {
    let size = max(1, Int(arguments[2])!) << 10
    setvbuf(stream, UnsafeMutablePointer<CChar>.allocate(capacity: size), _IOFBF, size)  // (lives as long as the process)
    opened = pcap_fopen_offline_with_tstamp_precision(stream, UInt32(PCAP_TSTAMP_PRECISION_NANO), &errorBuffer)
} else {
    opened = pcap_open_offline_with_tstamp_precision(arguments[1], UInt32(PCAP_TSTAMP_PRECISION_NANO), &errorBuffer)
}
guard let handle = opened else {
    fail("pcap-floor: \(errorBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })", 1)
}
var header: UnsafeMutablePointer<pcap_pkthdr>?
var data: UnsafePointer<UInt8>?
var packets = 0, bytes = 0, checksum: UInt8 = 0
while pcap_next_ex(handle, &header, &data) == 1 {
    packets += 1
    bytes += Int(header!.pointee.caplen)
    checksum &+= data![0]
}
pcap_close(handle)
print("{\"packets\": \(packets), \"bytes\": \(bytes), \"checksum\": \(checksum)}")
