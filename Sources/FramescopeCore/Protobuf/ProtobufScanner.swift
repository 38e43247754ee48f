/// Why a message body is not what it should be.
public enum ProtobufFailure: String, Sendable, CaseIterable, Comparable {
    /// The body ends inside a field, a nested message or a group.
    case truncated
    /// A varint longer than 10 bytes.
    case badVarint = "bad-varint"
    /// Wire type 6 or 7.
    case badWireType = "bad-wire-type"
    /// Field number 0 or above 2^29 - 1.
    case badFieldNumber = "bad-field-number"
    /// A length-delimited field longer than the message around it.
    case lengthPastEnd = "length-past-end"
    /// An end-group tag without its start.
    case unmatchedEndGroup = "unmatched-end-group"
    /// A string field that is not UTF-8 (schema only).
    case invalidUTF8 = "invalid-utf8"
    /// A proto2 required field missing (schema only).
    case missingRequired = "missing-required"
    /// Nesting deeper than 100 messages (the protobuf libraries' limit).
    case tooDeep = "too-deep"

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// Checks one message body as protobuf wire data while it streams past, holding no body bytes.
/// Without a schema every length-delimited field is opaque (it may be a string, bytes or a
/// message), so the check is the wire format of the top level and of groups. With a schema,
/// fields are read as declared, as the protobuf libraries parse: nested messages are checked
/// to any depth, strings must be UTF-8, proto2 required fields present, and a field whose wire
/// type differs from its declaration is kept as an unknown field, not an error.
struct ProtobufScanner {
    static let maxDepth = 100

    /// The schema's parts the scanner reads, held apart so that no per-field access copies (and
    /// retains) the whole schema.
    private let messages: [ProtobufSchema.MessageType]
    private let root: Int32
    private let countPath: [UInt32]?

    private enum Content: Equatable {
        case opaque
        case utf8
        /// A nested message: its type, and the field holding it (for the count path).
        case message(Int32, field: UInt32)
    }

    private enum State: Equatable {
        case tag
        /// A varint value; `counted` when it is the field messages are counted by.
        case varint(counted: Bool)
        case fixed(remaining: Int)
        /// The length of a length-delimited field, then its content.
        case length(Content)
        case opaque(remaining: Int64)
        case utf8(remaining: Int64)
    }

    private struct Frame {
        var end: Int64
        /// Message type index, -1 when unknown.
        var type: Int32
        /// The group's field number; 0 for a length-delimited message (or the body).
        var group: UInt32
        /// Required fields seen (bits as in `MessageType.requiredMask`).
        var seen: UInt64 = 0
        var onCountPath: Bool
    }

    private var state = State.tag
    /// The message being read, and those around it (outermost first; empty at the top level,
    /// so a flat body never touches the array).
    private var top = Frame(end: 0, type: -1, group: 0, onCountPath: false)
    private var outer: [Frame] = []
    private var position: Int64 = 0
    private var value: UInt64 = 0
    private var shift: UInt64 = 0
    /// UTF-8: continuation bytes still expected and the range the next one must be in.
    /// A string's bytes so far, a character possibly split across calls.
    private var utf8 = UTF8Validator()

    private(set) var failure: (reason: ProtobufFailure, at: Int64)?
    /// The counted field's value (the last occurrence wins, as in the libraries).
    private(set) var counted: UInt64?

    init(schema: ProtobufSchema?) {
        messages = schema?.messages ?? []
        root = schema.map { Int32($0.root) } ?? -1
        countPath = schema?.countBy?.path
    }

    /// Starts a body of `length` bytes.
    mutating func begin(length: Int64) {
        state = .tag
        if !outer.isEmpty { outer.removeAll(keepingCapacity: true) }
        top = Frame(end: length, type: root, group: 0, onCountPath: countPath != nil)
        position = 0
        value = 0
        shift = 0
        utf8 = UTF8Validator()
        failure = nil
        counted = nil
    }

    /// Bytes of the body, in order; their total must not exceed the length given to `begin`.
    mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        var i = 0
        let count = bytes.count
        while i < count {
            if failure != nil { break }
            let end = top.end
            if position == end {
                if outer.isEmpty { break }  // more than announced: not ours to judge
                if state == .tag && shift == 0 && top.group == 0 {
                    popFrame()
                } else {
                    fail(.truncated)  // a field or group runs past the message around it
                }
                continue
            }
            let room = Int(min(Int64(count - i), end - position))
            switch state {
            case .tag, .varint, .length:
                // A varint's bytes, as many as are here (a tag, value or length may be cut).
                var j = i, complete = false
                while j < i + room {
                    let byte = bytes[j]
                    j += 1
                    value |= UInt64(byte & 0x7F) << shift  // past 63 a smart shift gives 0
                    shift += 7
                    if byte < 0x80 {
                        complete = true
                        break
                    }
                    if shift >= 70 { break }
                }
                position += Int64(j - i)
                i = j
                if !complete {
                    if shift >= 70 { fail(.badVarint) }
                    continue
                }
                let v = value
                value = 0
                shift = 0
                switch state {
                case .tag: startField(tag: v)
                case .varint(let isCounted):
                    if isCounted { counted = v }
                    state = .tag
                case .length(let content): startContent(content, length: v)
                default: break
                }
            case .fixed(let remaining):
                let n = min(room, remaining)
                i += n
                position += Int64(n)
                state = n == remaining ? .tag : .fixed(remaining: remaining - n)
            case .opaque(let remaining):
                let n = Int(min(Int64(room), remaining))
                i += n
                position += Int64(n)
                state = Int64(n) == remaining ? .tag : .opaque(remaining: remaining - Int64(n))
            case .utf8(let remaining):
                let n = Int(min(Int64(room), remaining))
                if let bad = utf8.firstInvalid(bytes, from: i, count: n) {
                    position += Int64(bad - i)  // the offending byte
                    fail(.invalidUTF8)
                    break
                }
                i += n
                position += Int64(n)
                if Int64(n) == remaining {
                    if !utf8.atCharacterBoundary { fail(.invalidUTF8) }
                    state = .tag
                } else {
                    state = .utf8(remaining: remaining - Int64(n))
                }
            }
        }
    }

    /// The verdict once the whole body was fed: nil when it parses.
    mutating func finish() -> (reason: ProtobufFailure, at: Int64)? {
        if failure == nil {
            while !outer.isEmpty, state == .tag, shift == 0, top.group == 0, position == top.end {
                popFrame()
            }
            // Inside a nested message or group, a field, or a tag's varint (`shift` > 0).
            if failure == nil && (!outer.isEmpty || state != .tag || shift != 0) { fail(.truncated) }
            if failure == nil { checkRequired(top) }
        }
        return failure
    }

    // MARK: Fields

    private mutating func startField(tag: UInt64) {
        let number = tag >> 3, wire = tag & 7
        guard number != 0, number <= 0x1FFF_FFFF else { return fail(.badFieldNumber) }
        let field = UInt32(number)
        // The declared kind and nested type, read in place (a copied Field would retain its name).
        var declared: ProtobufSchema.Kind?
        var nested: Int32 = -1
        if top.type >= 0 {
            let type = Int(top.type)
            if let index = messages[type].fieldIndex(field) {
                let kind = messages[type].fields[index].kind
                // Another wire type (packed repeated scalars among them) is read as unknown.
                if wire == Self.wireType(of: kind) {
                    declared = kind
                    nested = Int32(messages[type].fields[index].messageType ?? -1)
                    if index < 64 { top.seen |= 1 << UInt64(index) }
                }
            }
        }
        switch wire {
        case 0:
            state = .varint(counted: isCountField(field))
        case 1:
            state = .fixed(remaining: 8)
        case 5:
            state = .fixed(remaining: 4)
        case 2:
            switch declared {
            case .string: state = .length(.utf8)
            case .message: state = .length(.message(nested, field: field))
            default: state = .length(.opaque)
            }
        case 3:
            push(Frame(end: top.end, type: declared == .group ? nested : -1, group: field, onCountPath: onCountPath(field)))
        case 4:
            guard top.group == field else { return fail(.unmatchedEndGroup) }
            popFrame()
        default:
            fail(.badWireType)
        }
    }

    private mutating func startContent(_ content: Content, length: UInt64) {
        guard length <= UInt64(top.end - position) else { return fail(.lengthPastEnd) }
        let n = Int64(length)
        switch content {
        case .opaque:
            state = n == 0 ? .tag : .opaque(remaining: n)
        case .utf8:
            utf8 = UTF8Validator()
            state = n == 0 ? .tag : .utf8(remaining: n)
        case .message(let type, let field):
            push(Frame(end: position + n, type: type, group: 0, onCountPath: onCountPath(field)))
            state = .tag
        }
    }

    private mutating func push(_ frame: Frame) {
        guard outer.count + 1 < Self.maxDepth else { return fail(.tooDeep) }
        outer.append(top)
        top = frame
    }

    private mutating func popFrame() {
        checkRequired(top)
        top = outer.removeLast()
    }

    private mutating func checkRequired(_ frame: Frame) {
        guard failure == nil, frame.type >= 0 else { return }
        let mask = messages[Int(frame.type)].requiredMask
        if frame.seen & mask != mask { fail(.missingRequired) }
    }

    private mutating func fail(_ reason: ProtobufFailure) {
        if failure == nil { failure = (reason, position) }
    }

    // MARK: Counting

    private func isCountField(_ field: UInt32) -> Bool {
        guard top.onCountPath, let path = countPath else { return false }
        return outer.count == path.count - 1 && path[outer.count] == field
    }

    private func onCountPath(_ field: UInt32) -> Bool {
        guard top.onCountPath, let path = countPath else { return false }
        return outer.count < path.count - 1 && path[outer.count] == field
    }

    private static func wireType(of kind: ProtobufSchema.Kind) -> UInt64 {
        switch kind {
        case .varint: 0
        case .fixed64: 1
        case .string, .bytes, .message: 2
        case .group: 3
        case .fixed32: 5
        }
    }
}
