@testable import FramescopeCore
import Foundation
import Testing

/// Inputs the fuzzers (scripts/fuzz) found crashes with, replayed the way the fuzz target ran
/// them: the first byte picks the SPEC, the next two the chunking, the rest is the stream.
@Suite struct FuzzRegressionTests {
    /// FuzzDissect, 2026-11-21: a PostgreSQL startup message claiming 5 bytes was decided on 8
    /// bytes (length and code), a frame shorter than what was read — a precondition trap.
    static let postgresShortStartup = "dDAAAAAABQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQAAAHIJ"

    func replay(spec: DissectorSpec, isClient: Bool, stream: [UInt8], cuts: [Int]) -> (frames: [Int64], analysis: DirectionAnalysis) {
        var analyzer = DirectionAnalyzer(dissector: SharedDissector(spec.makeDissector(isClient: isClient)), connection: ConnectionID(0), direction: .clientToServer)
        var context = AnalysisContext()
        context.recordMessages = true
        var offset = 0
        for (n, cut) in (cuts + [stream.count]).enumerated() where cut > offset {
            stream[offset..<cut].withUnsafeBytes { part in
                analyzer.feed(
                    StreamChunk(connection: ConnectionID(0), direction: .clientToServer, offset: Int64(offset), capturedOffset: Int64(offset),
                                bytes: part, frame: UInt64(n + 1), timestamp: .zero), context: &context)
            }
            offset = cut
        }
        analyzer.finish(context: &context)
        return (context.messages.map(\.length), analyzer.analysis)
    }

    @Test func postgresStartupShorterThanItsHeaderIsMalformedInAnyChunking() throws {
        let input = [UInt8](try #require(Data(base64Encoded: Self.postgresShortStartup)))
        let stream = Array(input.dropFirst(3))
        let spec = try DissectorSpec(parsing: "preset:postgres")
        let whole = replay(spec: spec, isClient: true, stream: stream, cuts: [])
        #expect(whole.analysis.malformedByReason[.lengthSmallerThanHeader] == 1)
        for cut in 1..<stream.count {
            let split = replay(spec: spec, isClient: true, stream: stream, cuts: [cut])
            #expect(split.frames == whole.frames && split.analysis.malformed == whole.analysis.malformed, "cut at \(cut)")
        }
    }

    @Test func aLengthShorterThanAMagicAtAnOffsetIsMalformed() throws {
        // PPTP-like: magic at 4..8, but a length of 2 claims a frame that ends before it.
        let spec = try DissectorSpec(parsing: "length:offset=0,width=2,adjust=-2,magic=1a2b3c4d@4")
        let stream: [UInt8] = [0, 2, 0, 1, 0x1A, 0x2B, 0x3C, 0x4D, 0, 0]
        for cut in 1..<stream.count {
            let result = replay(spec: spec, isClient: true, stream: stream, cuts: [cut])
            #expect(result.analysis.malformedByReason[.lengthSmallerThanHeader] == 1, "cut at \(cut)")
        }
    }
}
