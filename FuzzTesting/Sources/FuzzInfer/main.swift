// Framing inference on arbitrary streams: the input is cut into up to three samples (its first
// bytes say how, where segments start, whether a sample is whole or picked up mid-stream).
// Oracles: every SPEC inference names parses back, a port has a SPEC exactly when its verdict
// is not `none`, at most five candidates, a confidence between 0 and 1, coverage within 0…1.
// Each input tries a slice of the 40,000 length fields (every 2,048th, from a place its first
// bytes pick, and the plain ones at offset 0): all of them cost 50 ms an input, ten executions a
// second. Likewise every 8th of the 39 preset framings: judged in full whatever the sketch says,
// they were most of the time left (replaying 2,546 inputs: 11 s with every 512th field and every
// preset, 4 s with every 8th preset, 3 s with every 2,048th field).
@testable import FramescopeCore
import FuzzDriver

let vocabulary = FramingCandidate.lengthFields()
let plain = vocabulary.filter { $0.lengthField.map { $0.lengthFieldOffset == 0 && $0.lengthAdjustment == 0 } ?? false }
let every = 2048
let presets = FramingCandidate.presetCandidates
let everyPreset = 8

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = [UInt8](UnsafeRawBufferPointer(start: start, count: count))
    guard bytes.count >= 4 else { return 0 }
    let layout = bytes[0], cuts = Int(bytes[1]) + 1, body = Array(bytes[2...])
    let parts = Int(layout % 3) + 1
    var samples: [FramingInference.Sample] = []
    let size = (body.count + parts - 1) / parts
    for p in 0..<parts {
        let piece = Array(body[min(body.count, p * size)..<min(body.count, (p + 1) * size)])
        guard !piece.isEmpty else { continue }
        // Segment starts every `cuts` bytes, shifted per sample.
        let starts = [0] + stride(from: cuts + p, to: piece.count, by: cuts).map { $0 }
        samples.append(
            FramingInference.Sample(
                bytes: piece, segmentStarts: starts, complete: layout & 0x10 != 0, midStream: layout & (0x20 << p) != 0, connection: p,
                direction: p % 2 == 0 ? .clientToServer : .serverToClient))
    }
    let first = (Int(layout) << 8 | Int(bytes[1])) % every
    let lengthFields = plain + stride(from: first, to: vocabulary.count, by: every).map { vocabulary[$0] }
    let presetSlice = stride(from: first % everyPreset, to: presets.count, by: everyPreset).map { presets[$0] }
    let port = FramingInference.infer(
        samples, port: 9000, minimumEvidence: RecoveryBudget.defaultThreshold, lengthFields: lengthFields, presets: presetSlice)
    precondition(port.candidates.count <= 5, "more than five candidates")
    precondition((port.chosen == nil) == (port.verdict == .none), "a SPEC without a verdict, or a verdict without a SPEC")
    precondition(port.confidence >= 0 && port.confidence <= 1, "confidence \(port.confidence)")
    for candidate in port.candidates {
        precondition((try? DissectorSpec(parsing: candidate.spec)) != nil, "inference named a SPEC that does not parse: \(candidate.spec)")
        precondition(candidate.coverage >= 0 && candidate.coverage <= 1.0000001, "coverage \(candidate.coverage)")
    }
    return 0
}

@_cdecl("FuzzInfer_main")
func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
