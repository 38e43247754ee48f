// The SPEC grammar and protocol files (JSON or YAML) on arbitrary text.
import FramescopeCore
import FuzzDriver
import FramescopeReport
import Foundation

let probe: [UInt8] = [0, 0, 0, 0xFF, 0, 0, 0, 8, 0, 0, 0, 1, 65, 66, 67, 68, 0x0D, 0x0A, 0x80, 0x01]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    let text = String(decoding: data, as: UTF8.self)
    var specs: [DissectorSpec] = []
    if let spec = try? DissectorSpec(parsing: text) { specs.append(spec) }
    if let spec = try? ProtocolFile.parse(data, path: "fuzz") { specs.append(spec) }
    for spec in specs {
        // Oracle: a length field's SPEC text parses back to the same dissector.
        if case .lengthField(let d) = spec.kind {
            guard case .lengthField(let back) = try? DissectorSpec(parsing: d.specText).kind, back == d else {
                fatalError("specText does not round-trip: \(text) → \(d.specText)")
            }
            _ = SpecVariations.suggest(d, sample: probe + probe + probe + probe, segmentStarts: [0, 20, 40, 60], whole: true)
            _ = HeaderForensics.describe(probe, reason: .badMagic, dissector: .lengthField(d))
        }
        for isClient in [true, false] {
            let dissector = spec.makeDissector(isClient: isClient)
            var atStreamStart = dissector.hasStreamStart
            _ = probe.withUnsafeBytes { dissector.decode($0, consumed: 0, atStreamStart: &atStreamStart) }
        }
    }
    return 0
}


@_cdecl("FuzzSpec_main")
func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
