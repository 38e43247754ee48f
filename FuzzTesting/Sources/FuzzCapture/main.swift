// A whole capture file through libpcap (and the pcapng fallback reader), the flow table and the
// analyzer: whatever the bytes, no crash, and an unreadable file is an error, not a trap. A third
// of the inputs come with a frame index of their own bytes: frame numbers still only grow.
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
    writeFrameIndex(start, count)
    var options = ReassemblyOptions()
    options.maxConnections = 64
    options.maxBufferedBytesTotal = 1 << 20
    // Recovery on junk payload (FuzzDissect's ground) took 80% of the time: a few KB of it here.
    var table = FlowTable(sink: Analyzer(choice: choice, maxRecoveryBytes: 4096), options: options)
    var reader = CaptureReader(paths: [path])
    var lastFrame: UInt64 = 0
    reader.read { info, bytes in
        precondition(info.frame > lastFrame, "frame numbers go back")  // whatever the index says
        lastFrame = info.frame
        table.process(bytes, info: info)
    }
    table.finish()
    precondition(table.context.bufferedBytes == 0)
    return 0
}

/// Every third input also gets a frame index beside it (what `split` writes), made of its own
/// bytes: a record count from its middle byte, frame deltas from its first 64 bytes. The rest read
/// without one, as the corpus was made.
func writeFrameIndex(_ start: UnsafeRawPointer, _ count: Int) {
    let indexPath = path + ".frames"
    guard count > 0 && count % 3 == 0 else {
        unlink(indexPath)
        return
    }
    var bytes = Array("FSFRAMES".utf8)
    let records = UInt64(start.load(fromByteOffset: count / 2, as: UInt8.self))
    for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: records >> UInt64(shift))) }
    bytes += UnsafeRawBufferPointer(start: start, count: min(count, 64))
    guard let file = fopen(indexPath, "wb") else { return }
    fwrite(bytes, 1, bytes.count, file)
    fclose(file)
}


@_cdecl("FuzzCapture_main")
func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
