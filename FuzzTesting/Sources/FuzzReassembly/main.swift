// The flow table and reassemblers fed arbitrary segment sequences (ReassemblyScript), twice:
// - without limits, compared with ReferenceReassembly, the per-byte model: every direction's
//   stream byte for byte, gap bytes included, and where copies conflict;
// - with small limits and timeouts, where the model no longer applies, against invariants: each
//   direction's chunks are contiguous in the gap-free stream, gaps and chunks never overlap,
//   everything buffered is released by the end and the limits hold.
import FramescopeCore
import FramescopeSynthetic
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

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let script = ReassemblyScript(UnsafeRawBufferPointer(start: start, count: count))

    if let difference = script.disagreement() { fatalError("flow table ≠ reference model: \(difference)") }

    let options = ReassemblyScript.smallLimits
    var table = FlowTable(sink: CheckingSink(), options: options)
    let held = script.feed(&table, firstSecond: 1, secondsPerStep: 1)  // out-of-order bytes held between packets, at most
    precondition(table.context.bufferedBytes == 0, "buffered bytes left after finish")
    // The limit holds at every packet; the report's peak sums the groups' peaks (the same for
    // every --threads), an upper bound that may pass the limit when groups peak apart.
    precondition(held <= options.maxBufferedBytesTotal, "buffer limit exceeded")
    precondition(table.context.peakBufferedBytes >= held, "the peak reported is below what was held")
    return 0
}

@_cdecl("FuzzReassembly_main")
func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
