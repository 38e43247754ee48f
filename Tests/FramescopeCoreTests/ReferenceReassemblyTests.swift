import Foundation
import FramescopeCore
import FramescopeSynthetic
import Testing

/// The flow table against the per-byte reference model (ReferenceReassembly) on the committed
/// FuzzReassembly corpus and on the scripts the fuzzer once failed on, minimized.
@Suite struct ReferenceReassemblyTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("FuzzTesting/Corpus/FuzzReassembly")

    /// Drops steps while the flow table and the model still differ: the smallest script that shows it.
    static func minimized(_ script: ReassemblyScript) -> ReassemblyScript {
        var steps = script.steps
        var i = 0
        while i < steps.count {
            var fewer = steps
            fewer.remove(at: i)
            let candidate = ReassemblyScript(steps: fewer)
            if candidate.disagreement() != nil {
                steps = fewer
            } else {
                i += 1
            }
        }
        return ReassemblyScript(steps: steps)
    }

    static func check(_ script: ReassemblyScript, _ name: String) {
        guard let difference = script.disagreement() else { return }
        let small = minimized(script)
        Issue.record("\(name): \(difference)\nsmallest script:\n\(small.steps.map(\.description).joined(separator: "\n"))")
    }

    @Test func theCommittedFuzzCorpusReassemblesAsTheModel() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path)
        #expect(files.count > 50)
        for file in files {
            Self.check(ReassemblyScript(try Data(contentsOf: Self.corpus.appendingPathComponent(file))), file)
        }
    }

    /// Found by FuzzReassembly: a copy cut off by the snaplen arrived after the captured copy of
    /// the same out-of-order byte and replaced it with a gap (the first copy wins, even a missing one).
    @Test func aTruncatedCopyDoesNotReplaceBufferedBytes() {
        let (a, b) = (Endpoint("10.0.0.3:2000")!, Endpoint("10.0.0.1:1000")!)
        let steps = [(1627, [UInt8]()), (11355, [0]), (11355, [])].map { sequence, payload in
            ReassemblyScript.Step(source: a, destination: b, sequence: UInt32(sequence), flags: [.ack, .fin, .rst], payload: payload, missing: 6)
        }
        let script = ReassemblyScript(steps: steps)
        #expect(script.disagreement() == nil)
        let stream = script.reassemble(options: ReassemblyOptions()).streams.values.first
        #expect(stream.map(\.runs) == [.gap(9728), .bytes([0]), .gap(6)])
    }
}
