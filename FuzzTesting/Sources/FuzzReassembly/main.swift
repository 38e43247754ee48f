// The flow table and reassemblers fed arbitrary segment sequences, with small limits.
// Invariants: each direction's chunks are contiguous in the gap-free stream, gaps and chunks
// never overlap, and everything buffered is released by the end.
import FramescopeSynthetic
import FramescopeCore
import FuzzDriver

struct CheckingSink: StatelessStreamSink {
    var captured: [Int: Int64] = [:]
    var sequence: [Int: Int64] = [:]

    private func key(_ c: ConnectionID, _ d: Direction) -> Int { c.rawValue * 2 + d.rawValue }

    mutating func data(_ chunk: StreamChunk) {
        let k = key(chunk.connection, chunk.direction)
        precondition(chunk.capturedOffset == captured[k, default: 0], "chunks not contiguous")
        precondition(chunk.offset >= sequence[k, default: 0], "chunk before the frontier")
        precondition(!chunk.bytes.isEmpty)
        captured[k, default: 0] += Int64(chunk.bytes.count)
        sequence[k] = chunk.offset + Int64(chunk.bytes.count)
    }

    mutating func gap(_ gap: StreamGap) {
        let k = key(gap.connection, gap.direction)
        precondition(gap.length > 0 && gap.offset >= sequence[k, default: 0], "gap overlaps delivered bytes")
        precondition(gap.capturedOffset == captured[k, default: 0])
        sequence[k] = gap.offset + gap.length
    }

    mutating func connectionClosed(_ summary: ConnectionSummary) {}
}

let endpoints = [Endpoint("10.0.0.1:1000")!, Endpoint("10.0.0.2:80")!, Endpoint("10.0.0.3:2000")!]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    var input = UnsafeRawBufferPointer(start: start, count: count)[...]
    var options = ReassemblyOptions()
    options.maxBufferedBytesPerDirection = 2048
    options.maxBufferedBytesTotal = 4096
    options.maxConnections = 3
    options.conflictWindow = 64
    var table = FlowTable(sink: CheckingSink(), options: options)
    var frame: UInt64 = 0
    var sequence: [UInt32] = [0xFFFF_FF00, 0x7FFF_FFF0, 0, 1 << 31]
    // Record: [control][seq delta hi][seq delta lo][length] then `length` payload bytes.
    while input.count >= 4 {
        let control = input[input.startIndex], length = Int(input[input.startIndex + 3])
        let delta = Int16(bitPattern: UInt16(input[input.startIndex + 1]) << 8 | UInt16(input[input.startIndex + 2]))
        input = input.dropFirst(4)
        let payload = Array(input.prefix(length))
        input = input.dropFirst(payload.count)
        let pair = Int(control >> 6) % 3
        let (a, b) = (endpoints[pair], endpoints[(pair + 1) % 3])
        let reverse = control & 0x20 != 0
        let s = Int(control & 3)
        sequence[s] = sequence[s] &+ UInt32(bitPattern: Int32(delta))
        var flags: TCPFlags = [.ack]
        if control & 0x10 != 0 { flags.insert(.syn) }
        if control & 0x08 != 0 { flags.insert(.fin) }
        if control & 0x04 != 0 { flags.insert(.rst) }
        if flags.contains(.syn) && control & 0x01 == 0 { flags.remove(.ack) }
        frame += 1
        payload.withUnsafeBytes { bytes in
            let segment = TCPSegment(
                source: reverse ? b : a, destination: reverse ? a : b, sequence: sequence[s], flags: flags, payload: bytes,
                missingPayload: Int(control & 0x02) * 3)
            table.receive(segment, frame: frame, timestamp: Timestamp(seconds: Int64(frame), nanoseconds: 0))
        }
    }
    table.finish()
    precondition(table.context.bufferedBytes == 0, "buffered bytes left after finish")
    precondition(table.context.peakBufferedBytes <= options.maxBufferedBytesTotal + 2048 + 300, "buffer limit exceeded")
    return 0
}


@_cdecl("FuzzReassembly_main")
func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
