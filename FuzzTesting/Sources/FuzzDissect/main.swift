// Every dissector fed arbitrary streams in arbitrary chunking, length-framed bodies checked as
// protobuf (wire format or a small schema), picked up mid-stream or not. Oracle: without gaps,
// handing each segment over in any number of parts gives exactly the frames, events and body
// verdicts of handing it over whole (recovery weighs where segments start, not how they arrive).
@testable import FramescopeCore
import FuzzDriver

let specs: [String] = [
    "varint", "varint:max=300", "delimiter", "delimiter:\\n,max=64", "delimiter:0x00ff,max=200", "lines",
    "length:offset=0,width=2", "length:offset=4,width=4,magic=000000ff,type=8:4", "length:offset=5,width=2,type=2:2",
    "length:offset=6,width=4,encoding=ascii", "length:offset=4,width=8,encoding=ascii,adjust=-12,magic=56302e31,type=12:8",
    "length:offset=0,width=4,encoding=hex,adjust=-4,headeronly=3", "length:offset=1,encoding=varint,type=0:1",
    "length:offset=2,width=2,endian=little,adjust=20,min=24,max=4000", "length:offset=0,width=8,adjust=-8",
    "length:offset=0,width=3,adjust=6,preamble=505249", "preset:postgres", "preset:tls", "preset:bgp", "preset:pptp", "preset:ldap",
].map { $0 }
let parsed = specs.map { try! DissectorSpec(parsing: $0) }
/// One shared dissector per SPEC and side, as the analyzer makes them (recovery measures each once).
let shared = parsed.map { spec in [true, false].map { SharedDissector(spec.makeDissector(isClient: $0)) } }

/// Envelope { cmd = 1 (enum); text = 2 (string); inner = 3 (Envelope); data = 4 (bytes); n = 5 (fixed32); g = 6 (group Envelope) }.
let schema: ProtobufSchema = {
    var s = ProtobufSchema(
        messages: [
            .init(
                name: "f.Envelope",
                fields: [
                    .init(number: 1, name: "cmd", kind: .varint, enumType: 0), .init(number: 2, name: "text", kind: .string),
                    .init(number: 3, name: "inner", kind: .message, messageType: 0), .init(number: 4, name: "data", kind: .bytes),
                    .init(number: 5, name: "n", kind: .fixed32), .init(number: 6, name: "g", kind: .group, messageType: 0),
                ])
        ], enums: [.init(name: "f.Command", values: [(0, "NONE"), (1, "ONE")])], root: 0)
    try! s.countBy(fieldPath: "inner.cmd")
    return s
}()

struct Result: Equatable {
    var frames: [[Int64]] = []
    var analysis = DirectionAnalysis()
    var kinds: [String] = []
}

/// `cuts` end segments (each a frame of its own); `splits` cut a segment's bytes into several
/// calls of the same frame, as reassembly does when a segment is delivered in parts.
func run(
    _ spec: DissectorSpec, isClient: Bool, stream: UnsafeRawBufferPointer, cuts: [Int], splits: Set<Int> = [], gapAt: Int?, typed: Bool,
    midStream: Bool = false, traitSeed: UInt32 = 0, recutMSS: Int = 0
) -> Result {
    let check = spec.hasBody ? ProtobufCheck(schema: typed ? schema : nil, scope: .lengthFramed) : nil
    var analyzer = DirectionAnalyzer(
        dissector: shared[parsed.firstIndex(of: spec)!][isClient ? 0 : 1], connection: ConnectionID(0), direction: .clientToServer, protobuf: check)
    var context = AnalysisContext()
    context.recordMessages = true
    context.recutMSS = recutMSS
    var offset = 0
    var frame: UInt64 = 0
    var sequence: Int64 = 0
    for cut in cuts + [stream.count] where cut > offset {
        frame += 1
        if let gapAt, gapAt == Int(frame) {
            analyzer.gap(at: sequence, length: 7, context: &context)
            sequence += 7
        }
        for piece in (splits.filter { $0 > offset && $0 < cut }.sorted() + [cut]) {
            let part = UnsafeRawBufferPointer(rebasing: stream[offset..<piece])
            analyzer.feed(
                StreamChunk(
                    connection: ConnectionID(0), direction: .clientToServer, offset: sequence, capturedOffset: Int64(offset), bytes: part,
                    frame: frame, timestamp: Timestamp(nanoseconds: Int64(frame)), midStream: midStream,
                    traits: SegmentTraits(rawValue: UInt8(truncatingIfNeeded: (UInt32(truncatingIfNeeded: frame) &* 0x9E37_79B1 ^ traitSeed) >> 7) & 0x1F)),
                context: &context)
            sequence += Int64(part.count)
            offset = piece
        }
    }
    analyzer.finish(context: &context)
    var result = Result()
    result.frames = context.messages.map { [$0.offset, $0.length, Int64(bitPattern: $0.type ?? UInt64.max)] }
    result.analysis = analyzer.analysis
    // Body verdicts with where they fail (other events' offsets may depend on where a delimiter
    // scan stopped, which depends on the chunking).
    result.kinds = context.evidence.events.filter { $0.kind == .invalidProtobuf }.map { "\($0.offset) \($0.protobufFailure.map { "\($0.reason)@\($0.offset)" } ?? "")" }
    return result
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard count >= 3 else { return 0 }
    let input = UnsafeRawBufferPointer(start: start, count: count)
    let spec = parsed[Int(input[0]) % parsed.count]
    let isClient = input[1] & 1 == 0
    let stream = UnsafeRawBufferPointer(rebasing: input[3...])
    // Cut points from a small generator seeded by the second and third bytes.
    var state = UInt32(input[1]) << 8 | UInt32(input[2]) | 1
    var cuts: [Int] = []
    var position = 0
    while position < stream.count {
        state ^= state << 13; state ^= state >> 17; state ^= state << 5
        position += 1 + Int(state % 97)
        if position < stream.count { cuts.append(position) }
    }
    let typed = input[1] & 2 != 0
    let midStream = input[2] & 1 != 0
    // Recovery weighs where segments start, so the oracle keeps the segments and varies how
    // their bytes are handed over: every other cut splits a segment instead of ending it.
    let segmentEnds = cuts.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
    let splits = Set(cuts.enumerated().filter { $0.offset % 2 == 1 }.map(\.element))
    // How each segment was sent (SegmentTraits), drawn per frame: the same segment, the same traits.
    let traitSeed = UInt32(input[1]) &* 0x0101_0101 ^ UInt32(input[2])
    let whole = run(spec, isClient: isClient, stream: stream, cuts: segmentEnds, gapAt: nil, typed: typed, midStream: midStream, traitSeed: traitSeed)
    let chunked = run(
        spec, isClient: isClient, stream: stream, cuts: segmentEnds, splits: splits, gapAt: nil, typed: typed, midStream: midStream, traitSeed: traitSeed)
    precondition(whole.frames == chunked.frames, "chunking changed the frames")
    // Every partial message and merged segment has one cause; the same segments, the same causes.
    for r in [whole, chunked] {
        precondition(r.analysis.partialCauses.total == r.analysis.partialMessages, "a partial message without exactly one cause")
        precondition(r.analysis.mergedCauses.total == r.analysis.mergedSegments, "a merged segment without exactly one cause")
    }
    if whole.analysis.partialMessages == chunked.analysis.partialMessages && whole.analysis.mergedSegments == chunked.analysis.mergedSegments {
        precondition(whole.analysis.partialCauses == chunked.analysis.partialCauses && whole.analysis.mergedCauses == chunked.analysis.mergedCauses,
                     "chunking changed the causes")
    }
    // Re-cut as the wire would have carried it (--mss): the messages stay, when nothing made
    // the framing search (recovery weighs where segments start).
    if !midStream && whole.analysis.malformed == 0 && whole.analysis.undissectedBytes == 0 {
        let recut = run(
            spec, isClient: isClient, stream: stream, cuts: segmentEnds, gapAt: nil, typed: typed, midStream: false, traitSeed: traitSeed,
            recutMSS: 64 + Int(input[2] % 64))
        precondition(recut.frames == whole.frames, "re-cutting segments changed the messages")
        precondition(recut.analysis.partialCauses.total == recut.analysis.partialMessages, "a re-cut partial message without one cause")
    }
    precondition(whole.analysis.malformed == chunked.analysis.malformed && whole.analysis.undissectedBytes == chunked.analysis.undissectedBytes,
                 "chunking changed malformed/undissected")
    precondition(
        whole.analysis.protobufChecked == chunked.analysis.protobufChecked && whole.analysis.protobufInvalidByReason == chunked.analysis.protobufInvalidByReason
            && whole.analysis.protobufCounts == chunked.analysis.protobufCounts, "chunking changed the protobuf verdicts")
    precondition(whole.kinds == chunked.kinds, "chunking changed the invalid-protobuf events")
    // With a gap somewhere: no crash, and the accounting stays consistent.
    let gapped = run(spec, isClient: isClient, stream: stream, cuts: cuts, gapAt: Int(input[2] % 8) + 1, typed: typed, midStream: midStream)
    precondition(gapped.analysis.messages >= 0 && gapped.analysis.undissectedBytes <= Int64(stream.count))
    return 0
}


@_cdecl("FuzzDissect_main")
func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
