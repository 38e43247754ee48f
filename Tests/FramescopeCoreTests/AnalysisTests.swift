import FramescopeSynthetic
@testable import FramescopeCore
import Testing

@Suite struct AnalysisTests {
    /// Varint messages of these body sizes, cut into segments of these sizes; returns the
    /// client→server analysis and the events.
    func analyze(
        _ stream: [UInt8], segments: [Int], spec: String = "varint", skip: Set<Int> = [], options: ReassemblyOptions = ReassemblyOptions()
    ) -> (DirectionAnalysis, [AnalysisEvent]) {
        var table = FlowTable(sink: Analyzer(choice: DissectorChoice(byDefault: try! DissectorSpec(parsing: spec))), options: options)
        var frame: UInt64 = 0
        func send(_ from: Endpoint, _ to: Endpoint, seq: UInt32, _ flags: TCPFlags, _ payload: [UInt8] = []) {
            frame += 1
            let packet = PacketBuilder().tcp(from: from, to: to, sequence: seq, flags: flags, payload: payload)
            packet.withUnsafeBytes {
                table.process($0, info: CaptureInfo(frame: frame, timestamp: Timestamp(seconds: Int64(frame), nanoseconds: 0), linkType: .ethernet, captureLength: packet.count, originalLength: packet.count))
            }
        }
        send(client, server, seq: 100, [.syn])
        send(server, client, seq: 900, [.syn, .ack])
        var offset = 0
        for (i, size) in segments.enumerated() {
            if !skip.contains(i) { send(client, server, seq: 101 + UInt32(offset), [.ack, .psh], Array(stream[offset..<(offset + size)])) }
            offset += size
        }
        table.finish()
        let connection = table.sink.connections[0]
        return (connection.directions?.clientToServer ?? DirectionAnalysis(), table.sink.context.evidence.events)
    }

    func message(_ n: Int) -> [UInt8] { varintBytes(n) + pattern(n, n) }

    @Test func partialMergedAndNaiveLossAreCountedPerDefinition() {
        // Messages A(11 B) B(11) C(31) D(6); segments: [A B] [C first 10] [C rest 21 + D 6].
        let stream = message(10) + message(10) + message(30) + message(5)
        let (a, events) = analyze(stream, segments: [22, 10, 27])
        #expect(a.messages == 4 && events.isEmpty)
        #expect(a.segments == 3)
        #expect(a.partialMessages == 1)  // C
        #expect(a.segmentsPerMessage.maximum == 2)
        #expect(a.mergedSegments == 2)  // [A B] and [C rest + D]
        #expect(a.messagesPerSegment.maximum == 2)
        // Safe: A only (starts its segment, ends in it, first in it). B second in segment,
        // C spans, D not at a segment start.
        #expect(a.naiveReaderLoss == 3)
        #expect(a.sizes.minimum == 6 && a.sizes.maximum == 31)
        #expect(a.assemblyLatencyMicroseconds.maximum == 1_000_000)  // C: frames 4 → 5
    }

    /// `isBlank` (what lets the listing write `{}` at once) holds for untouched figures only:
    /// one message, one anomaly, a cause or a timeline event makes them non-blank.
    @Test func onlyUntouchedFiguresAreBlank() {
        #expect(DirectionAnalysis().isBlank)
        var quiet = DirectionAnalysis()
        quiet.malformed = 0  // assigning zero allocates no anomalies
        #expect(quiet.isBlank)
        let touched: [(inout DirectionAnalysis) -> Void] = [
            { $0.messages = 1 }, { $0.segments = 1 }, { $0.sizes.add(7) }, { $0.malformed += 1 }, { $0.leadingBytes += 3 },
            { $0.partialCauses[.mss] += 1 }, { $0.timeline.add(.merged, at: Timestamp(nanoseconds: 1)) }, { $0.countType(2) },
            { $0.segmentsPerMessage.add(1) }, { $0.protobufChecked = 1 },
        ]
        for (i, touch) in touched.enumerated() {
            var a = DirectionAnalysis()
            touch(&a)
            #expect(!a.isBlank, "change \(i)")
        }
        // The analysis of a stream with one message is not blank; of none, it is.
        #expect(!analyze([2, 1, 1], segments: [3]).0.isBlank)
    }

    @Test func oneMessagePerSegmentLosesNothing() {
        let stream = message(10) + message(20) + message(0)
        let (a, _) = analyze(stream, segments: [11, 21, 1])
        #expect(a.messages == 3 && a.partialMessages == 0 && a.mergedSegments == 0 && a.naiveReaderLoss == 0)
    }

    /// A writeDelimitedTo message: a varint length, then a protobuf body of `n` bytes (field 1,
    /// a string of letters).
    func protoMessage(_ n: Int, seed: Int = 0) -> [UInt8] {
        let text = (0..<(n - 2)).map { UInt8(0x61 + ($0 * 7 + seed) % 26) }
        return varintBytes(n) + [0x0A, UInt8(n - 2)] + text
    }

    @Test func aMalformedHeaderIsOneJunkEventAndFramingResumesWithEvidence() {
        // A, 6 bytes of junk (a varint too long), then B…F, each written in its own segment.
        let junk: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        let after = (1...5).map { protoMessage(90 + $0, seed: $0) }
        let stream = protoMessage(100) + junk + after.flatMap { $0 }
        let (a, events) = analyze(stream, segments: [101 + 6] + after.map(\.count), spec: "varint:max=250")
        #expect(a.malformed == 1 && a.malformedByReason[.varintTooLong] == 1)
        #expect(events.map(\.kind) == [.malformed])
        #expect(events.first?.offset == 101 && events.first?.frame == 3 && events.first?.length == 6)
        #expect(events.first?.bytes.prefix(6) == junk[...])
        #expect((events.first?.evidenceBits ?? 0) >= 32)
        #expect(a.resyncs == 1)
        #expect(a.messages == 6)
        #expect(a.undissectedBytes == 6)
    }

    @Test func withoutEvidenceTheJunkStaysUndissectedAndNoMessageIsCountedInIt() {
        // The same junk, then three messages whose bodies are not protobuf, all in one segment:
        // nothing says where the next message starts.
        let stream = message(10) + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF] + message(200) + message(3) + message(4)
        let (a, events) = analyze(stream, segments: [stream.count], spec: "varint:max=250")
        #expect(a.malformed == 1 && a.messages == 1 && a.resyncs == 0 && a.boundariesNotFound == 1)
        #expect(a.undissectedBytes == Int64(stream.count - 11))
        #expect(events.map(\.kind) == [.malformed] && events.first?.length == Int64(stream.count - 11) && events.first?.evidenceBits == nil)
    }

    @Test func resyncWithAMagicFindsTheNextChainOfMagics() {
        let spec = "length:offset=4,width=4,magic=000000ff,type=8:4"
        func m(_ n: Int, _ type: UInt64) -> [UInt8] { [0, 0, 0, 0xFF] + bigEndian(UInt64(n + 4), width: 4) + bigEndian(type, width: 4) + pattern(n, n) }
        let after = [m(7, 2), m(30, 3), m(12, 4)]
        let stream = m(5, 1) + [0, 0, 0, 0xFE, 1, 2, 3] + after.flatMap { $0 }
        let (a, events) = analyze(stream, segments: [10, 14] + after.map(\.count), spec: spec)
        #expect(a.malformedByReason[.badMagic] == 1)
        #expect(a.messages == 4)
        #expect(a.types == [1: 1, 2: 1, 3: 1, 4: 1])
        #expect(a.undissectedBytes == 7)
        #expect(events.map(\.kind) == [.malformed] && events.first?.length == 7)
    }

    @Test func aLengthAboveMaxIsNeverAllocatedAndTheDirectionIsGivenUpAfterAMegabyte() {
        // 4-byte length claiming 4 GiB, then 1.1 MiB of bytes that never chain into frames.
        let stream: [UInt8] = [0xFF, 0xFF, 0xFF, 0xF0] + [UInt8](repeating: 0xEE, count: 1100 << 10)
        let (a, events) = analyze(stream, segments: Array(repeating: 1024, count: 1100) + [4], spec: "length:offset=0,width=4")
        #expect(a.malformedByReason[.lengthTooLarge] == 1)
        #expect(a.stopped)
        #expect(a.messages == 0)
        #expect(a.undissectedBytes == Int64(stream.count))
        #expect(events.map(\.kind) == [.malformed, .gaveUp])
    }

    @Test func aGapDamagesItsMessageAndFramingResumesAfterIt() {
        // Segments: [A][B first 10][B next 10 — lost][B rest + C][D]
        let stream = message(10) + message(40) + message(8) + message(9)
        let (a, events) = analyze(stream, segments: [11, 10, 10, 30, 10], skip: [2])
        #expect(a.damagedByGaps == 1)
        #expect(a.malformed == 0)
        #expect(a.messages == 3)  // A, C, D: B's end was known, so framing went on without a resync
        #expect(events.map(\.kind) == [.damagedByGap])
    }

    @Test func aGapAtAFrameBoundaryResynchronises() {
        let messages = (0..<6).map { protoMessage(100, seed: $0) }
        let (a, events) = analyze(messages.flatMap { $0 }, segments: messages.map(\.count), skip: [1])
        #expect(a.damagedByGaps == 0)
        #expect(a.messages == 5)
        #expect(a.resyncs == 1 && a.undissectedBytes == 0)
        #expect(events.map(\.kind) == [.resynchronized] && (events.first?.evidenceBits ?? 0) >= 16)
    }

    @Test func aGapInTinySegmentsLeavesTheRestUndissected() {
        // Eleven-byte messages, one per segment: after the gap, nothing tells a boundary apart.
        let stream = message(10) + message(10) + message(10) + message(10)
        let (a, _) = analyze(stream, segments: [11, 11, 11, 11], skip: [1])
        #expect(a.messages == 1 && a.resyncs == 0 && a.boundariesNotFound == 1 && a.undissectedBytes == 22)
    }

    @Test func aMessageCutByTheEndIsIncompleteNotMalformed() {
        let stream = message(10) + Array(message(100).prefix(40))
        let (a, events) = analyze(stream, segments: [11, 40])
        #expect(a.messages == 1 && a.incompleteAtEnd == 1 && a.malformed == 0)
        #expect(a.incompleteBytes == 40)
        #expect(events.map(\.kind) == [.incompleteAtEnd])
        #expect(a.mergedSegments == 0)
    }

    @Test func asciiLengthsReportNonDigits() {
        let (a, events) = analyze(Array("HEADER00x1abcdef".utf8), segments: [16], spec: "length:offset=6,width=4,encoding=ascii")
        #expect(a.malformedByReason[.nonDigitLength] == 1)
        #expect(events.first?.offset == 0)
    }

    @Test func delimiterNotFoundWithinMax() {
        let stream = Array("ok\r\n".utf8) + [UInt8](repeating: 0x61, count: 100) + Array("\r\nafter\r\n".utf8)
        let (a, _) = analyze(stream, segments: [stream.count], spec: "delimiter:\\r\\n,max=50")
        #expect(a.malformedByReason[.delimiterNotFound] == 1)
        #expect(a.messages == 2)  // "ok" and "after": the long line is skipped up to its delimiter
    }
}

@Suite struct DissectorSpecTests {
    @Test(arguments: [
        ("length:offset=x", "'offset=x' in 'length:offset=x': expected a whole number"),
        ("preset:nope", "unknown preset 'nope'"),
        ("length:offset=0", "width=W (1…8 bytes) is required"),
        ("length:offset=0,width=4,bogus=1", "unknown option 'bogus'"),
        ("length:offset=0,width=4,encoding=base64", "expected binary, ascii, hex, varint or ber"),
        ("length:offset=0,width=4,magic=zz", "expected 1…32 hex bytes"),
        ("length:offset=0,width=4,type=1", "expected OFFSET:WIDTH"),
        ("frobnicate", "unknown dissector 'frobnicate'"),
        ("varint:max=big", "expected a size"),
        ("delimiter:\\q", "unknown escape"),
    ])
    func badSpecsSayWhatIsWrong(spec: String, message: String) {
        #expect(throws: SpecError.self) { try DissectorSpec(parsing: spec) }
        do {
            _ = try DissectorSpec(parsing: spec)
        } catch {
            #expect(error.description.contains(message), "\(error.description)")
        }
    }

    @Test func nettyNamesAreAliases() throws {
        let short = try DissectorSpec(parsing: "length:offset=2,width=4,adjust=-6,max=1M")
        let long = try DissectorSpec(parsing: "length:lengthFieldOffset=2,lengthFieldLength=4,lengthAdjustment=-6,maxFrameLength=1M")
        #expect(short.kind == long.kind)
    }

    @Test func everyPresetParses() throws {
        for name in DissectorSpec.presets.keys {
            let spec = try DissectorSpec(parsing: "preset:\(name)")
            #expect(spec.name == name)
        }
    }
}
