// A whole capture file through libpcap (and the pcapng fallback reader), the flow table and the
// analyzer: whatever the bytes, no crash, and an unreadable file is an error, not a trap.
import FramescopeCapture
import FramescopeCore
import FuzzDriver
import Glibc

let path = "/dev/shm/framescope-fuzz-\(getpid()).pcap"
let choice = DissectorChoice(byDefault: try! DissectorSpec(parsing: "varint"), byServerPort: [80: try! DissectorSpec(parsing: "lines")])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard let file = fopen(path, "wb") else { return 0 }
    fwrite(start, 1, count, file)
    fclose(file)
    var options = ReassemblyOptions()
    options.maxConnections = 64
    options.maxBufferedBytesTotal = 1 << 20
    var table = FlowTable(sink: Analyzer(choice: choice), options: options)
    var reader = CaptureReader(paths: [path])
    reader.read { info, bytes in table.process(bytes, info: info) }
    table.finish()
    precondition(table.context.bufferedBytes == 0)
    return 0
}


@_cdecl("FuzzCapture_main")
func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
