@testable import FramescopeCore
import FramescopeSynthetic
import Foundation
import Testing

/// Inputs the fuzzers (scripts/fuzz) found crashes with, replayed the way the fuzz target ran
/// them: the first byte picks the SPEC, the next two the chunking, the rest is the stream.
@Suite struct FuzzRegressionTests {
    /// FuzzDissect, 2026-11-21: a PostgreSQL startup message claiming 5 bytes was decided on 8
    /// bytes (length and code), a frame shorter than what was read — a precondition trap.
    static let postgresShortStartup = "dDAAAAAABQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQAAAHIJ"

    static let repeatingTypedVarintFrames = "IQAPDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDw8PDyAA"

    /// FuzzDissect, 2026-11-24: varint lengths that run on for many bytes, the stream handed
    /// over in different parts of the same segments, framed differently.
    static let longVarintsInParts = "ISUw29HBjY2NjY2NjY2NjY2NjY2NjY2NjY0JRQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCecJCQlFCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkNCQkJCQkJCQmUCecJCQkJCQkJCQkJCQkJCQkJCfb2/////////////////////////0RNTU1NTU1NTU1NTU1NTU1NTQNNTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1FTEVURQkJCQkN5wkJCQkJCQkJCdJcFQD/////CAD///////////////87/////0RFTEVURQkJCQkJCQkJCQkJCQkJCQAJCQkJCQkJCQkJCQkJDQn///////8JCQ0JCQkJCf///w3nCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCfYJCQkJ////DecJCQkJCQkJCQkJCQkJCQkJb29vb29vb29vb29vb29vb29vbwkJCQkJCQkJCfb29vb29vb29vb29vb29vb29vb2Afb29kD29vb29vb29vb29vb29gkD/AEAAAUJCQkNCQkJCQkJCQkJ5wkJCQkJCQkJCQkJCQkJCQkJ9vb2jY2NjTCNjY2NjY2NjY2NjY2NjY3bjY2N0lwVAAkJCQ0JCQkJCQkJCQnnCUUJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJDQkJCQkJCQkJCecJCQkJCQkJCQkJCQkJCQkJCfb2/////////////////////////0RNTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1FTEVURQkJCQkN5wkJCQkJCQkJCdJcFQD/////CAD///////////////87/////0RFTEVURQkJCQkJCQkJCQkJCQkJCQAJCQkJCQkJCQkJCQkJDQn///8hAytiAwEAAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQGhAQEBAQEBAQEAkpKSkpIICAgICAgICAgICAgICAgICAgILggICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAiSkkVBRCCSkhKSkpKSkpKSkpKSklLp7khFQUQgVEWSkpKSkpKSkpKSkpKSkpKSkpKSkpKSkpKSkpKSkpKS////////REVMRVRFCQkJkpKSCQ3nCSOSkpKSkg=="

    /// FuzzReassembly, 2026-11-27: 350 segments whose payload the snaplen cut off wholly, ahead of
    /// holes in three connections of different groups. The target held the report's peak (the
    /// groups' peaks summed, an upper bound that is the same for every `--threads`) to the global
    /// limit; the groups peaked at different times, so the sum passed it while what was held at
    /// once never did.
    static let cutSegmentsAheadOfHoles = "AI4BAI4AAACOAAEAAQApAC0A/2AAAP9gAACOAAEAAAEAKQAtAP9gAAD/YAAAjgABAI4AAAEAAHoAAAAAAAAAAAAAAP9gAACOAAEAjgAAAQAAegAAAAAAAAAA/2AAAI4AAQCOAAABABB6AAAAAAAAAAAAAAAAAAAAjgABACkALQD/YAAA/2AAAI4AAQCOAAABAAB6AAAAAAAAAAAAAAAAjgGOAAEAKQAtAP9gAP8AYAAAjgABAI4AAAEAAHoAAAAAAAAAAAAAAACOAQCOAAAAjgABACkALQD/YAAA/2AAAI4AAQCOAAABAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAACOAY4AAQApAC0A/2AAAP9gAACOAAEAjgAAAQAAegAAAAAAAAAAAAAAAI4BAI4AAACOAAEAKQAtAP9gAAD/YAAAjgABAI4AAAEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAjgAAAQAAegAAAAAAAAAAAAAAAAAAAI4AAQApAC0A/2AAAP9gAACOAAEAjgAAAQAAegAAAAAAAAAAAAAAAI4BjgABACkALQD/YAAA/2AAAI4AAQCOAAABAAB6AAAAAAAAAAAAAAAAjgEAjgAAAI4AAQApAC0A/2AAKQAtAP9gAAD/YAAAjgABAI4AAAEAAHoAAAAAAAAAAAAAAAAAAAAAAAAAjgABACkALQD/YAAA/2AAAI4AAQCOAAABAAB6AAAAAAAAAAAAAAAAjgGOAAEAKQAtAP9gAAD/YAAAjgABAI4AAAEAAHoAAAAAAAAAAHoAAAAAAAAAAAAAAACOAQCOAAAAjgABACkALQD/YAAA/2AAAI4AAQCOAAABAAAAAAAAAAAAAAAAAAAAAAAAAPgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAACOAAAAjgABACkALQD/YAAA/2AAAI4AAQCOAAABAAAAAAAAAI4BjgABACkALQD/YAAA/2AAAI4AAQCOAAABAAB6AAAAAAAAAAAAAAAAjgEAjgAAAI4AAQApAC0A/2AAAP9gAACOAAEAjgAAAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAACOAAABAAB6AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAACOAAAAjgABACkALQD/YAAg/2AAAI4AAQCOAAABAAEAAHoAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAI4AAACOAgAAAAAAAABgAAD/YAAAAAAAAAAAAAAAAAAAAAAAAAAAAACOAAEAKQAtAP9gAAD/YAAAjgABAI4AAAEAAHoAAAAAAAAAAAAAAAAAAAAAAAAAjgABACkALQD/YAAAAAAAAAAAAAAAAAAAAAAAAAAAAACOAAAAjgABACkALQD/YAAg/2AAAI4AAQCOAAABAAEAAHoAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAI4AAACOAAEAKQAtAP9gAAD/YAAAAAAAAAAAAAAAAAAAAAAAAAAAAACOAAEAKQAtAP9gAAD/YAAAjgABAI4AAAEAAHoAAAAAAAAAAAAAAAAAAAAAAAAAjgABACkALQD/YAAA/2AAAI4AAQCOAAABAAB6AAAAAAAAAAAAAAAAjgGOAAEAKQAtAP9gAAD/YAAAjgABAI4AAACYAPsAAQBWLfoAVi36AFYA2ACvBPoAVgBWAK8EBACtmoMAfgAAAFYAmABVLfoAVgCYAP//////////////////////////////////////////////////////////////////////////////rwT6AFYAVgBWAJgArwT6AFYAVgCv/P0AU2V0AH4AAABWAJgA+wABAFUEBAEAKQAtAP9gAAD/YAAAjgABAI4AAAEAAAAAEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEAAAAAAAVgB+AAAAVgCYAFUt+gBWLfoAVgDYAK8E+gBWAFYArwQEAK2agwB+AAAAVgCYAFUt+gBWAJgAVgCYAK8E+gBWAFYAr/z9AFNldAB+AAAAVgCYAPsAAQBWLfoAVi36AFYA2ACvBPoAVgBWAK8EBACtmoMAfgAAAFYAmABVLfoAVgCYAK8E+gBWAFYAr/z9AFNldAB+AAAAVgCYAFUt+gBWLfoAVgBWAK8EBACtmoMAfgD6AFYAmACvBPoAVgBWAK/8/QBTZXQAfgAAAFaAmABVLfoAVi36AFYt+gBWANgArwT6AFYAmABVLfoAVi36AFYt+gBWANgArwT6AFYAVgCvBAQArZqDAH4AAABWAJgAVS36AFYAmACvBPoAVgBWAH4AAABWAJgAVS36AFYt+gBWANgArwT6AFYAVgCvBAQArZqDAH4AAABWAJgAVS36AFYAKACvBPoAVgBWAK/8/QBTZXQAfgAAAFYAmAD7AAEAVi36AFYt+gBWANgArwT6AFYAVgCvBAQArZqDAH4AAABWAJgAVS36AFYAmACvBPoAVgBWAK/8/QBTZXQAfgAAAFYAmABVLfoAVi36AFYAVgCvBAQArZqDAH4AAABWmoMAfgAAAFYAmABVLfoAVgCYAK8E+gBWAFYAr/z9AFNldAB+AAAAVoDYAK8E+gBWAFYArwQEAK2agwB+AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABWAJgAVS36AFYAmACvBPoAVgCYAK8E+gBWAFYAr/z9AFNldAB+AAAAVgCYAPsAAQBWLfoAVi36AFYA2ACvBPoAVgBWAK8EBACtmoMAfgAAAFYAmABVLfoAVgCYAK8E+gBWAFYAr/z9AFNldAB+AAAAVgCYAFUt+gBWLfoAVgBWAE0EBACtmoMAfgD6AFYAmACvBPoAVgBWAK/8/QBTZXQAfgAAAFaAmABVLfoAVi36AFYt+gBWANgArwT6AFYAmABVLfoAVi36AFYt+gBWANgArwT6AFYAVgCvBAQArZqDAH4AAABWAJgAVS36AFZldAB+AAAAVoCYAFUt+gBWLfoAVi36AFYA2ACvBPoAVgCYAFUt+gBWLfoAVi36AFYA2ACvBPoAVgBWAK8EBACtmoMAfgAAAFYAmABVLfoAVgCYAK8E+gBWLfoAVgDYAK8E+gBWAFYArwQEAK2agwB+AAAAVgCYAFUt+gBWAJgArwT6AFYAVgCv/P0AU2V0AH4AAHIAVgCYAPsAAQCvBPoAVgBWAK/8/QBTZXQAfgAAAFYAmAD7AAEAVi36AFYt+gBWjgABAAAAAAD/oQA="

    @Test func theBufferLimitHoldsAtEveryPacketThoughTheGroupsPeaksSumPastIt() throws {
        let script = ReassemblyScript([UInt8](try #require(Data(base64Encoded: Self.cutSegmentsAheadOfHoles))))
        let options = ReassemblyScript.smallLimits
        var table = FlowTable(sink: DiscardingSink(), options: options)
        let held = script.feed(&table, firstSecond: 1, secondsPerStep: 1)  // as FuzzReassembly runs it
        #expect(held <= options.maxBufferedBytesTotal)
        #expect(table.context.peakBufferedBytes >= held && table.context.peakBufferedBytes > options.maxBufferedBytesTotal)
        #expect(table.context.bufferedBytes == 0)
    }

    func replay(
        spec: DissectorSpec, isClient: Bool, stream: [UInt8], cuts: [Int], splits: Set<Int> = [], midStream: Bool = false
    ) -> (frames: [Int64], analysis: DirectionAnalysis) {
        var analyzer = DirectionAnalyzer(dissector: SharedDissector(spec.makeDissector(isClient: isClient)), connection: ConnectionID(0), direction: .clientToServer)
        var context = AnalysisContext()
        context.recordMessages = true
        var offset = 0
        for (n, cut) in (cuts + [stream.count]).enumerated() where cut > offset {
            for piece in splits.filter({ $0 > offset && $0 < cut }).sorted() + [cut] {
                stream[offset..<piece].withUnsafeBytes { part in
                    analyzer.feed(
                        StreamChunk(connection: ConnectionID(0), direction: .clientToServer, offset: Int64(offset), capturedOffset: Int64(offset),
                                    bytes: part, frame: UInt64(n + 1), timestamp: Timestamp(nanoseconds: Int64(n + 1)), midStream: midStream),
                        context: &context)
                }
                offset = piece
            }
        }
        analyzer.finish(context: &context)
        return (context.messages.map(\.length), analyzer.analysis)
    }

    /// FuzzSpec: an empty magic (`magic= `) crashed the parser on an empty split; a negative or
    /// empty offset was taken (a magic read before the frame).
    @Test func aMagicWithoutBytesOrWithABadOffsetIsASpecError() throws {
        for text in ["length:offset=4,width=4,magic= ", "length:offset=4,width=4,magic=", "length:offset=0,width=2,magic=ab@-3",
            "length:offset=0,width=2,magic=ab@", "length:offset=0,width=2,magic=@4"]
        {
            #expect(throws: SpecError.self, "\(text)") { try DissectorSpec(parsing: text) }
        }
        // The input FuzzSpec crashed on, decoded as the target decodes it.
        let crash: [UInt8] = [
            0x6c, 0x65, 0x6e, 0x67, 0x74, 0x68, 0x3a, 0x6f, 0x66, 0x66, 0x73, 0x65, 0x74, 0x3d, 0x34, 0x2c,
            0x77, 0x69, 0x64, 0x74, 0x68, 0x3d, 0x34, 0x2c, 0x6d, 0x61, 0x67, 0x69, 0x63, 0x3d, 0x20, 0x30,
            0x30, 0x30, 0xff, 0xff, 0x30, 0x65, 0x6e, 0x67, 0x74, 0x68, 0x3a, 0x6f, 0x66, 0x66, 0x73, 0x65,
            0x74, 0x3d, 0x34, 0x2c, 0x77, 0x69, 0x64, 0x74, 0x68, 0x3d, 0x34, 0x2c, 0x6d, 0x61, 0x67, 0x69,
            0x63, 0x3d, 0x20,
        ]
        #expect(throws: SpecError.self) { try DissectorSpec(parsing: String(decoding: crash, as: UTF8.self)) }
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

    /// FuzzDissect's chunking of an input: the stream after three bytes, the segment ends and
    /// the splits inside segments its generator (seeded by bytes 1 and 2) draws.
    static func chunking(_ base64: String) throws -> (stream: [UInt8], ends: [Int], splits: Set<Int>) {
        let input = [UInt8](try #require(Data(base64Encoded: base64)))
        let stream = Array(input.dropFirst(3))
        var state = UInt32(input[1]) << 8 | UInt32(input[2]) | 1
        var cuts: [Int] = [], position = 0
        while position < stream.count {
            state ^= state << 13; state ^= state >> 17; state ^= state << 5
            position += 1 + Int(state % 97)
            if position < stream.count { cuts.append(position) }
        }
        let ends = cuts.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        return (stream, ends, Set(cuts.enumerated().filter { $0.offset % 2 == 1 }.map(\.element)))
    }

    /// FuzzDissect, 2026-11-23: a run of identical MQTT-like frames (type 0x0f, length 15) picked
    /// up mid-stream; splitting segments into parts must not change what recovery finds.
    @Test func repeatingTypedFramesAreFoundTheSameInAnyChunking() throws {
        let (stream, ends, splits) = try Self.chunking(Self.repeatingTypedVarintFrames)
        let spec = try DissectorSpec(parsing: "length:offset=1,encoding=varint,type=0:1")
        let whole = replay(spec: spec, isClient: true, stream: stream, cuts: ends, midStream: true)
        let parts = replay(spec: spec, isClient: true, stream: stream, cuts: ends, splits: splits, midStream: true)
        #expect(whole.frames == parts.frames, "ends \(ends), splits \(splits.sorted())")
        #expect(whole.analysis.leadingBytes == parts.analysis.leadingBytes)
    }

    /// A header read over two segments, one of them handed over in parts (see `longVarintsInParts`).
    @Test func longVarintLengthsFrameTheSameInAnyChunking() throws {
        let (stream, ends, splits) = try Self.chunking(Self.longVarintsInParts)
        let spec = try DissectorSpec(parsing: "length:offset=1,encoding=varint,type=0:1")
        let whole = replay(spec: spec, isClient: false, stream: stream, cuts: ends)
        let parts = replay(spec: spec, isClient: false, stream: stream, cuts: ends, splits: splits)
        #expect(whole.frames == parts.frames, "ends \(ends), splits \(splits.sorted())")
        #expect(whole.analysis.malformed == parts.analysis.malformed)
    }
}

/// Reassembles and keeps nothing (the limits are what a test looks at).
private struct DiscardingSink: StatelessStreamSink {
    mutating func connectionClosed(_ summary: ConnectionSummary) {}
}
