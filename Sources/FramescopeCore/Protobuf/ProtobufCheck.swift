/// What `analyze` checks message bodies as: protobuf wire data, by schema when one is given.
public struct ProtobufCheck: Sendable {
    public enum Scope: Sendable {
        /// Only `varint` (writeDelimitedTo) framing, whose bodies are protobuf by definition.
        case varintDelimited
        /// Every connection framed by a length field.
        case lengthFramed
    }

    public var schema: ProtobufSchema?
    public var scope: Scope

    public init(schema: ProtobufSchema?, scope: Scope) {
        self.schema = schema
        self.scope = scope
    }

    public func applies(to spec: DissectorSpec) -> Bool {
        switch scope {
        case .varintDelimited: spec.isVarintDelimited
        case .lengthFramed: spec.hasBody
        }
    }
}

/// What a framing plan checks every body against, made once and shared by its directions.
final class BodyRules: Sendable {
    let schema: ProtobufSchema?
    /// `schema != nil`, read per body without the optional struct's value witnesses.
    let hasSchema: Bool
    let countDefault: UInt64
    /// Whether valid bodies are counted by a field (`--count-by`): only then are the counts read.
    let counts: Bool

    init(schema: ProtobufSchema?) {
        self.schema = schema
        hasSchema = schema != nil
        countDefault = schema?.countDefault ?? 0
        counts = schema?.countBy != nil
    }

    /// For directions whose bodies go unchecked.
    static let none = BodyRules(schema: nil)
}

/// The protobuf check of one direction's bodies: cuts the body out of the frame bytes passing
/// by (stream offsets), feeds the scanner, and keeps what the evidence needs. A body whole in
/// one chunk is checked in one call and keeps nothing; the scanner and the evidence of a body
/// that streams or fails live out of line, allocated when first needed.
struct BodyInspection {
    /// Shared by every direction a plan frames: a reference, not the schema, in each.
    private let rules: BodyRules
    private var start: Int64 = 0
    private var end: Int64 = 0
    private(set) var active = false
    /// The verdict of a body checked whole (`checkWhole`), until `finish` hands it out.
    private var wholeVerdict: (failure: (reason: ProtobufFailure, at: Int64)?, counted: UInt64)?
    private var detail = OutOfLine<Detail>()
    /// Whether the values `finish` hands out are wanted (`--count-by`).
    var counts: Bool { rules.counts }

    /// The streaming scanner and the evidence of the body being checked.
    private struct Detail: Blank {
        var scanner: ProtobufScanner?
        /// The body's first bytes, for the evidence.
        var prefix = InlineBytes()
        /// The frames that carried the body's first byte and the byte the scanner failed at.
        var startFrame: UInt64 = 0
        var failureFrame: UInt64 = 0
    }

    // Each field read where it lies: `detail.value` would copy the scanner with it (retains and
    // releases of its arrays, three times for every invalid body's event).
    var prefix: InlineBytes { detail.stored?.value.prefix ?? InlineBytes() }
    var startFrame: UInt64 { detail.stored?.value.startFrame ?? 0 }
    var failureFrame: UInt64 { detail.stored?.value.failureFrame ?? 0 }

    /// A body is being checked (streaming) or was checked whole and awaits `finish`.
    var isPending: Bool { active || wholeVerdict != nil }

    init(rules: BodyRules) {
        self.rules = rules
    }

    var bodyStart: Int64 { start }
    var bodyLength: Int64 { end - start }

    mutating func begin(start: Int64, end: Int64) {
        self.start = start
        self.end = end
        active = true
        wholeVerdict = nil
        let schema = rules.schema
        update { d in
            d.prefix.removeAll()
            if d.scanner == nil { d.scanner = ProtobufScanner(schema: schema) }
            d.scanner!.begin(length: end - start)
        }
    }

    /// A body whose bytes are all here, the common case: without a schema it skips the state
    /// machine and its bookkeeping (the prefix is kept only for an invalid body).
    mutating func checkWhole(_ body: UnsafeRawBufferPointer, start: Int64, frame: UInt64) {
        self.start = start
        end = start + Int64(body.count)
        if !rules.hasSchema {
            switch ProtobufScanner.checkWhole(body, groups: true) {
            case .valid:
                active = false
                wholeVerdict = (nil, rules.countDefault)
                return
            case .invalid(let reason, let at):
                active = false
                wholeVerdict = ((reason, at), rules.countDefault)
                update { d in
                    d.prefix.removeAll()
                    d.prefix.append(body, limit: 16)
                    d.startFrame = frame
                    d.failureFrame = frame
                }
                return
            case .hasGroups:
                break
            }
        }
        begin(start: start, end: end)
        feed(body, at: start, frame: frame)
        wholeVerdict = finish(frame: frame)
    }

    /// Frame bytes at stream offset `offset`; only those inside the body are read.
    mutating func feed(_ bytes: UnsafeRawBufferPointer, at offset: Int64, frame: UInt64) {
        guard active else { return }
        let from = max(offset, start), to = min(offset + Int64(bytes.count), end)
        guard from < to else { return }
        let part = bytes.slice(from: Int(from - offset), count: Int(to - from))
        update { d in
            if d.prefix.isEmpty { d.startFrame = frame }
            if d.prefix.count < 16 { d.prefix.append(part, limit: 16) }
            let failedBefore = d.scanner!.failure != nil
            d.scanner!.feed(part)
            if !failedBefore && d.scanner!.failure != nil { d.failureFrame = frame }
        }
    }

    /// The verdict for the body just completed: nil when it parses, and the counted value.
    mutating func finish(frame: UInt64) -> (failure: (reason: ProtobufFailure, at: Int64)?, counted: UInt64) {
        if let verdict = wholeVerdict {
            wholeVerdict = nil
            return verdict
        }
        active = false
        let countDefault = rules.countDefault
        return update { d in
            let failedBefore = d.scanner!.failure != nil
            let failure = d.scanner!.finish()
            if !failedBefore && failure != nil { d.failureFrame = frame }
            return (failure, d.scanner!.counted ?? countDefault)
        }
    }

    mutating func abandon() {
        active = false
        wholeVerdict = nil
    }

    private mutating func update<T>(_ body: (inout Detail) -> T) -> T {
        body(&detail.value)
    }
}
