@testable import FramescopeCore
import FramescopeSynthetic
import Testing

/// The streaming protobuf check: wire format without a schema, declared types with one; the
/// same verdict however the body is split.
@Suite struct ProtobufScannerTests {
    /// Envelope { cmd = 1 (enum Command); seq = 2; text = 3 (string); attachment = 4 (Attachment); sent_at = 5 (fixed64);
    /// ids = 6 (repeated uint32); header = 7 (Header) }, Attachment { name = 1 (string); data = 2 (bytes) },
    /// Header { kind = 1 (enum Command) }, Legacy (proto2) { id = 1 (required uint64); label = 2 (string, unchecked); g = 3 (group G) },
    /// G { x = 1 (uint32) }.
    static let schema: ProtobufSchema = {
        var s = ProtobufSchema(
            messages: [
                .init(
                    name: "chat.Envelope",
                    fields: [
                        .init(number: 1, name: "cmd", kind: .varint, enumType: 0), .init(number: 2, name: "seq", kind: .varint),
                        .init(number: 3, name: "text", kind: .string), .init(number: 4, name: "attachment", kind: .message, messageType: 1),
                        .init(number: 5, name: "sent_at", kind: .fixed64), .init(number: 6, name: "ids", kind: .varint, repeated: true),
                        .init(number: 7, name: "header", kind: .message, messageType: 2),
                    ]),
                .init(name: "chat.Attachment", fields: [.init(number: 1, name: "name", kind: .string), .init(number: 2, name: "data", kind: .bytes)]),
                .init(name: "chat.Header", fields: [.init(number: 1, name: "kind", kind: .varint, enumType: 0)]),
                .init(
                    name: "chat.Legacy",
                    fields: [
                        .init(number: 1, name: "id", kind: .varint, required: true), .init(number: 2, name: "label", kind: .bytes),
                        .init(number: 3, name: "g", kind: .group, messageType: 4),
                    ]),
                .init(name: "chat.Legacy.G", fields: [.init(number: 1, name: "x", kind: .varint)]),
            ],
            enums: [.init(name: "chat.Command", values: [(0, "UNSPECIFIED"), (1, "LOGIN"), (2, "SEND")])], root: 0)
        return s
    }()

    static func schema(root: Int, countBy: String? = nil) -> ProtobufSchema {
        var s = schema
        s.root = root
        if let countBy { try! s.countBy(fieldPath: countBy) }
        return s
    }

    /// The verdict, fed whole and split at every position into two and into single bytes.
    func verdict(_ body: [UInt8], schema: ProtobufSchema?) -> (failure: ProtobufFailure?, at: Int64?, counted: UInt64?) {
        func run(_ cuts: [Int]) -> (ProtobufFailure?, Int64?, UInt64?) {
            var scanner = ProtobufScanner(schema: schema)
            scanner.begin(length: Int64(body.count))
            var start = 0
            for end in cuts + [body.count] {
                body[start..<end].withUnsafeBytes { scanner.feed($0) }
                start = end
            }
            let failure = scanner.finish()
            return (failure?.reason, failure?.at, scanner.counted)
        }
        let whole = run([])
        for cut in 0...body.count { #expect(run([cut]) == whole, "split at \(cut)") }
        #expect(run(Array(0..<body.count)) == whole, "byte by byte")
        if schema == nil { #expect(Self.checkWhole(body) == (whole.0, whole.1), "checked whole") }
        return whole
    }

    /// The whole-body check without a schema, groups read (what the body check uses).
    static func checkWhole(_ body: [UInt8]) -> (ProtobufFailure?, Int64?) {
        switch body.withUnsafeBytes({ ProtobufScanner.checkWhole($0, groups: true) }) {
        case .valid: (nil, nil)
        case .invalid(let reason, let at): (reason, at)
        case .hasGroups: (.badWireType, -1)  // never: groups were asked for
        }
    }

    /// The whole-body check gives the state machine's verdict and failure offset on bodies made
    /// of group starts and ends, varints, fixed and length-delimited fields in any order, cut
    /// anywhere (most unbalanced: random bytes start a group in most bodies).
    @Test func theWholeBodyCheckReadsGroupsAsTheStateMachineDoes() {
        var rng = SplitMix64(seed: 18)
        var groupsRead = 0
        for _ in 0..<50_000 {
            var body: [UInt8] = []
            for _ in 0..<Int(rng.next() % 12) {
                let field = UInt8(1 + rng.next() % 3)
                switch rng.next() % 8 {
                case 0, 1: body += [field << 3 | 3]
                case 2, 3: body += [field << 3 | 4]
                case 4: body += [field << 3, UInt8(rng.next() % 256)]
                case 5: body += [field << 3 | 2, UInt8(rng.next() % 4), 0x61, 0x62]
                case 6: body += [field << 3 | 5, 1, 2, 3, 4]
                default: body += [UInt8(rng.next() % 256)]
                }
            }
            if !body.isEmpty, rng.next() % 4 == 0 { body.removeLast(Int(rng.next() % UInt64(body.count))) }
            var scanner = ProtobufScanner(schema: nil)
            scanner.begin(length: Int64(body.count))
            body.withUnsafeBytes { scanner.feed($0) }
            let failure = scanner.finish()
            #expect(Self.checkWhole(body) == (failure?.reason, failure?.at), "\(body)")
            if body.contains(where: { $0 & 7 == 3 }) { groupsRead += 1 }
        }
        #expect(groupsRead > 20_000)
    }

    /// The yes-or-no check recovery's search asks (`isValidWhole`) answers as the whole-body
    /// check without groups does: on random bytes, on fields of every wire type cut anywhere, and
    /// on varints of every length up to too long.
    @Test func theYesOrNoCheckAgreesWithTheWholeBodyCheck() {
        var rng = SplitMix64(seed: 19)
        var valid = 0
        for n in 0..<100_000 {
            var body: [UInt8] = []
            if n % 4 == 0 {
                body = (0..<rng.next() % 24).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            } else {
                for _ in 0..<Int(rng.next() % 10) {
                    let field = UInt8(rng.next() % 4)
                    switch rng.next() % 9 {
                    case 0: body += [field << 3 | 3]
                    case 1: body += [field << 3 | UInt8(4 + rng.next() % 4)]
                    case 2: body += [field << 3, UInt8(rng.next() % 256)]
                    case 3: body += [field << 3] + Array(repeating: 0xFF, count: Int(rng.next() % 11)) + [0x01]
                    case 4: body += [field << 3 | 2, UInt8(rng.next() % 6), 0x61, 0x62]
                    case 5: body += [field << 3 | 5, 1, 2, 3, 4]
                    case 6: body += [field << 3 | 1] + Array(repeating: 7, count: Int(rng.next() % 10))
                    case 7: body += [0x80 | field << 3, UInt8(rng.next() % 256), 0x00]
                    default: body += [UInt8(truncatingIfNeeded: rng.next())]
                    }
                }
                if !body.isEmpty, rng.next() % 4 == 0 { body.removeLast(Int(rng.next() % UInt64(body.count))) }
            }
            let whole: Bool
            if case .valid = body.withUnsafeBytes({ ProtobufScanner.checkWhole($0) }) { whole = true } else { whole = false }
            #expect(body.withUnsafeBytes { ProtobufScanner.isValidWhole($0) } == whole, "\(body)")
            if whole { valid += 1 }
        }
        #expect(valid > 10_000 && valid < 90_000)
    }

    static let text: [UInt8] = Array("héllo".utf8)
    static let valid: [UInt8] = [0x08, 0x02, 0x10, 0x96, 0x01, 0x1A, UInt8(text.count)] + text
        + [0x22, 0x07, 0x0A, 0x01, 0x61, 0x12, 0x02, 0xFF, 0x00] + [0x29, 1, 2, 3, 4, 5, 6, 7, 8] + [0x32, 0x03, 0x01, 0x96, 0x01]

    @Test func aValidEnvelopeParsesWithAndWithoutTheSchema() {
        #expect(verdict(Self.valid, schema: nil).failure == nil)
        let typed = verdict(Self.valid, schema: Self.schema(root: 0, countBy: "cmd"))
        #expect(typed.failure == nil && typed.counted == 2)
        #expect(verdict([], schema: Self.schema).failure == nil)  // the empty message
    }

    @Test func wireFormatFailuresWithoutASchema() {
        #expect(verdict([0x08], schema: nil).failure == .truncated)  // a tag without its value
        #expect(verdict([0x08, 0x80], schema: nil).failure == .truncated)
        #expect(verdict([0x08] + Array(repeating: 0xFF, count: 10) + [0x01], schema: nil).failure == .badVarint)
        #expect(verdict([0x0F, 0x00], schema: nil).failure == .badWireType)
        #expect(verdict([0x00, 0x00], schema: nil).failure == .badFieldNumber)
        #expect(verdict([0x12, 0x05, 0x61], schema: nil).failure == .lengthPastEnd)
        #expect(verdict([0x0C], schema: nil).failure == .unmatchedEndGroup)
        #expect(verdict([0x0B, 0x08, 0x01], schema: nil).failure == .truncated)  // group never closed
        #expect(verdict([0x0B, 0x08, 0x01, 0x0C], schema: nil).failure == nil)
        // A body or a nested message ending inside a tag's varint (found by the differential test).
        #expect(verdict([0xA5], schema: nil).failure == .truncated)
        #expect(verdict([0x08, 0x0B, 0xC3], schema: nil).failure == .truncated)
        #expect(verdict([0x22, 0x01, 0x8A], schema: Self.schema(root: 0)).failure == .truncated)
        let json = Array(#"{"seq":1}"#.utf8)
        let failure = verdict(json, schema: nil)
        #expect(failure.failure != nil && failure.at != nil)
    }

    @Test func theSchemaChecksNestedMessagesAndStrings() {
        let s = Self.schema(root: 0)
        #expect(verdict([0x1A, 0x02, 0xC3, 0x28], schema: s).failure == .invalidUTF8)  // bad continuation
        #expect(verdict([0x1A, 0x02, 0xED, 0xA0], schema: s).failure == .invalidUTF8)  // a surrogate
        #expect(verdict([0x1A, 0x01, 0xE2], schema: s).failure == .invalidUTF8)  // cut inside a character
        #expect(verdict([0x1A, 0x02, 0xC3, 0x28], schema: nil).failure == nil)  // only the schema knows it is a string
        #expect(verdict([0x22, 0x04, 0x0A, 0x02, 0xC3, 0x28], schema: s) == (.invalidUTF8, 5, nil))  // nested
        #expect(verdict([0x22, 0x02, 0x0A, 0x05, 0x61], schema: s).failure == .lengthPastEnd)  // longer than its message
        #expect(verdict([0x22, 0x02, 0x08, 0x96, 0x01], schema: s).failure == .truncated)  // a varint across the end
        #expect(verdict([0x12, 0x02, 0xC3, 0x28], schema: Self.schema(root: 1)).failure == nil)  // bytes are not checked
    }

    @Test func aMismatchedWireTypeIsAnUnknownFieldAsInTheLibraries() {
        let s = Self.schema(root: 0)
        #expect(verdict([0x1D, 1, 2, 3, 4], schema: s).failure == nil)  // text (3) sent as fixed32
        #expect(verdict([0x25, 1, 2, 3, 4], schema: s).failure == nil)  // attachment (4) as fixed32
        #expect(verdict([0x32, 0x02, 0x01, 0x02], schema: s).failure == nil)  // packed repeated
    }

    @Test func proto2RequiredFieldsAndGroups() {
        let s = Self.schema(root: 3)
        #expect(verdict([0x08, 0x01], schema: s).failure == nil)
        #expect(verdict([0x12, 0x00], schema: s).failure == .missingRequired)
        #expect(verdict([0x08, 0x01, 0x1B, 0x08, 0x05, 0x1C], schema: s).failure == nil)
        #expect(verdict([0x08, 0x01, 0x1B, 0x08, 0x05, 0x14], schema: s).failure == .unmatchedEndGroup)
        #expect(verdict([0x12, 0x02, 0xFF, 0xFE, 0x08, 0x01], schema: s).failure == nil)  // proto2 strings are not checked
    }

    @Test func countingByANestedFieldAndTheDefault() {
        let s = Self.schema(root: 0, countBy: "header.kind")
        #expect(verdict([0x3A, 0x02, 0x08, 0x01, 0x08, 0x02], schema: s).counted == 1)  // header.kind, not cmd
        #expect(verdict([0x08, 0x02], schema: s).counted == nil)  // absent: the caller counts the default
        #expect(s.countDefault == 0 && s.countLabel(1) == "LOGIN" && s.countLabel(9) == "9")
        var bad = Self.schema
        #expect(throws: ProtobufSchema.CountByError.noSuchField("nope", in: "chat.Envelope")) { try bad.countBy(fieldPath: "nope") }
        #expect(throws: ProtobufSchema.CountByError.notCountable("text")) { try bad.countBy(fieldPath: "text") }
        #expect(throws: ProtobufSchema.CountByError.notAMessage("seq")) { try bad.countBy(fieldPath: "seq.x") }
    }

    @Test func eachBodyStartsAfresh() {
        var scanner = ProtobufScanner(schema: nil)
        scanner.begin(length: 3)
        [0x08, 0x96].withUnsafeBytes { scanner.feed($0) }  // abandoned inside a varint (a gap)
        scanner.begin(length: 2)
        [0x08, 0x01].withUnsafeBytes { scanner.feed($0) }
        #expect(scanner.finish() == nil)
    }

    @Test func nestingDeeperThanAHundredIsRefused() {
        var body: [UInt8] = []
        for _ in 0..<120 { body = [0x0B] + body + [0x0C] }  // groups of field 1
        #expect(verdict(body, schema: nil).failure == .tooDeep)
    }
}
