import Foundation
import FramescopeSynthetic
import Testing

@testable import FramescopeCore

/// Retransmitted copies compared with the first copy read back from the capture file
/// (`DeliveredLocations`) give what comparing with a copy kept in memory (`ConflictWindow`) does.
@Suite struct DeliveredLocationsTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("FuzzTesting/Corpus/FuzzReassembly")

    /// A file of `script`'s payloads, each after a few bytes of filler (as record headers lie
    /// between packets), and where each payload starts.
    static func payloadFile(_ script: ReassemblyScript, generator: inout SplitMix64) -> (path: String, offsets: [Int64]) {
        var file: [UInt8] = [], offsets: [Int64] = []
        for step in script.steps {
            file += (0..<Int.random(in: 0...20, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            offsets.append(Int64(file.count))
            file += step.payload
        }
        let path = NSTemporaryDirectory() + "framescope-located-\(UUID().uuidString)"
        FileManager.default.createFile(atPath: path, contents: Data(file))
        return (path, offsets)
    }

    /// Feeds `script` to a flow table, the payloads located in `file` when it is given.
    static func run(_ script: ReassemblyScript, options: ReassemblyOptions, file: (path: String, offsets: [Int64])?) -> RecordingSink {
        let files = file.map { file in
            let files = CaptureFiles(inputs: 1)
            files.adopt(open(file.path, O_RDONLY), input: 0)
            return files
        }
        var table = FlowTable(sink: RecordingSink(), options: options, captureFiles: files)
        for (i, step) in script.steps.enumerated() {
            step.payload.withUnsafeBytes { bytes in
                var segment = TCPSegment(
                    source: step.source, destination: step.destination, sequence: step.sequence, flags: step.flags, payload: bytes,
                    missingPayload: step.missing)
                if let file { segment.payloadLocation = CaptureLocation(input: 0, offset: file.offsets[i]) }
                table.receive(segment, frame: UInt64(i + 1), timestamp: Timestamp(seconds: 0, nanoseconds: 0))
            }
        }
        table.finish()
        return table.sink
    }

    /// Located and copied runs of one script: the same conflicts, in the same order, and the same
    /// figures per direction (unchecked overlap bytes included).
    static func expectSame(_ script: ReassemblyScript, window: Int, generator: inout SplitMix64, _ name: String) {
        var options = ReassemblyScript.smallLimits
        options.conflictWindow = window
        let file = payloadFile(script, generator: &generator)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let copied = run(script, options: options, file: nil), located = run(script, options: options, file: file)
        #expect(located.conflicts == copied.conflicts, "\(name), window \(window)")
        #expect(located.closed.map(\.directions) == copied.closed.map(\.directions), "\(name), window \(window)")
        #expect(located.bytes == copied.bytes, "\(name), window \(window)")
    }

    @Test(arguments: [16, 64, 256, 4096])
    func theCommittedFuzzCorpusFindsTheSameConflictsEitherWay(window: Int) throws {
        var generator = SplitMix64(seed: UInt64(window))
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path).sorted()
        #expect(files.count > 50)
        for file in files {
            Self.expectSame(ReassemblyScript(try Data(contentsOf: Self.corpus.appendingPathComponent(file))), window: window, generator: &generator, file)
        }
    }

    /// Retransmissions of one direction's stream, some with other bytes, in segments of every
    /// size (many small ones make the located window change to a copy), with holes and reordering.
    @Test func retransmissionsOfEverySizeFindTheSameConflictsEitherWay() {
        var generator = SplitMix64(seed: 7)
        let (a, b) = (Endpoint("10.0.0.1:1000")!, Endpoint("10.0.0.2:2000")!)
        for round in 0..<200 {
            let stream = (0..<3000).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var steps = [ReassemblyScript.Step(source: a, destination: b, sequence: 999, flags: [.syn], payload: [])]
            var sent = 0
            let largest = [8, 64, 400, 1500][round % 4]
            while sent < stream.count {
                let count = min(stream.count - sent, Int.random(in: 1...largest, using: &generator))
                steps.append(.init(source: a, destination: b, sequence: UInt32(1000 + sent), flags: [.ack], payload: Array(stream[sent..<sent + count])))
                if Int.random(in: 0..<4, using: &generator) == 0 {  // a copy of something sent before, maybe altered
                    let start = Int.random(in: max(0, sent - 600)...sent, using: &generator)
                    var copy = Array(stream[start..<min(stream.count, start + Int.random(in: 1...300, using: &generator))])
                    if Bool.random(using: &generator) { copy[Int.random(in: 0..<copy.count, using: &generator)] ^= 0x5A }
                    steps.append(.init(source: a, destination: b, sequence: UInt32(1000 + start), flags: [.ack], payload: copy))
                }
                if steps.count > 3 && Int.random(in: 0..<10, using: &generator) == 0 { steps.swapAt(steps.count - 1, steps.count - 2) }
                sent += count
            }
            if round % 5 == 0 { steps.remove(at: Int.random(in: 1..<steps.count, using: &generator)) }  // a hole
            let script = ReassemblyScript(steps: steps)
            for window in [64, 256, 1024] {
                Self.expectSame(script, window: window, generator: &generator, "round \(round)")
            }
        }
    }

    /// Bytes that can no longer be read back are not compared: counted as unchecked, never as a conflict.
    @Test func bytesThatCannotBeReadBackAreUnchecked() throws {
        let path = NSTemporaryDirectory() + "framescope-located-\(UUID().uuidString)"
        FileManager.default.createFile(atPath: path, contents: Data([UInt8](repeating: 7, count: 100)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let files = CaptureFiles(inputs: 1)
        files.adopt(open(path, O_RDONLY), input: 0)
        let deliveries = DeliveredLocations.make()
        #expect(deliveries.append(count: 60, at: 0, location: CaptureLocation(input: 0, offset: 40), capacity: 256))
        let same = [UInt8](repeating: 7, count: 20), other = [UInt8](repeating: 8, count: 20)
        #expect(same.withUnsafeBytes { deliveries.compare($0, at: 30, reading: files) } == (30, 20, false))
        #expect(other.withUnsafeBytes { deliveries.compare($0, at: 30, reading: files) } == (30, 20, true))
        try FileHandle(forWritingTo: URL(fileURLWithPath: path)).truncate(atOffset: 50)
        #expect(other.withUnsafeBytes { deliveries.compare($0, at: 30, reading: files) } == (30, 0, false))
    }
}
