// The speed floor for the benchmark: a bare pcap_next_ex loop over a capture, touching every
// packet's length and first byte and nothing more. Prints packets and bytes read.
import CPcap

#if canImport(Glibc)
import Glibc
#endif

func fail(_ message: String, _ status: Int32) -> Never {
    var text = message + "\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(status)
}

guard CommandLine.arguments.count == 2 else { fail("usage: pcap-floor FILE", 64) }
var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE) + 1)
guard let handle = pcap_open_offline_with_tstamp_precision(CommandLine.arguments[1], UInt32(PCAP_TSTAMP_PRECISION_NANO), &errorBuffer) else {
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
