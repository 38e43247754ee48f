#if canImport(Glibc)
import Glibc
#endif

/// A JSON file read back: a report `merge` combines. Mapped, not copied (a report listing a
/// million connections is hundreds of megabytes, and most of it is copied through unread);
/// values are found as byte ranges, and only the small ones become `JSONNode` trees.
final class JSONDocument {
    let path: String
    let bytes: UnsafeRawBufferPointer
    private let mapped: UnsafeMutableRawPointer?

    init(path: String) throws {
        self.path = path
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw JSONError(path: path, offset: nil, "cannot open: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw JSONError(path: path, offset: nil, "cannot read: \(String(cString: strerror(errno)))") }
        let size = Int(info.st_size)
        guard size > 0 else { throw JSONError(path: path, offset: nil, "is empty") }
        guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else {
            throw JSONError(path: path, offset: nil, "cannot map: \(String(cString: strerror(errno)))")
        }
        mapped = base
        bytes = UnsafeRawBufferPointer(start: base, count: size)
    }

    deinit {
        if let mapped { munmap(mapped, bytes.count) }
    }

    /// The members of the object the document is (nothing but white space after it): each key
    /// with its value's range, the values unread.
    func rootMembers() throws -> [(key: String, range: Range<Int>)] {
        var scanner = JSONScanner(self, at: 0)
        let members = try scanner.members()
        scanner.skipSpace()
        guard scanner.position == bytes.count else { throw scanner.error("more after the document's end") }
        return members
    }

    /// Calls `body` with each object of an array: its range and members (the values unread),
    /// one at a time (a report lists a million connections).
    func forEachObject(inArrayAt start: Int, _ body: (Range<Int>, [(key: String, range: Range<Int>)]) throws -> Void) throws {
        var scanner = JSONScanner(self, at: start)
        try scanner.forEachObject(body)
    }

    /// The value at `start` as a tree.
    func value(at start: Int) throws -> JSONNode {
        var scanner = JSONScanner(self, at: start)
        return try scanner.value(depth: 0)
    }

    func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
}

/// A JSON value as a tree: object members keep their order, numbers their text.
indirect enum JSONNode {
    case object([(key: String, value: JSONNode)])
    case array([JSONNode])
    case string(String)
    case number(String)
    case bool(Bool)
    case null

    subscript(key: String) -> JSONNode? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    var members: [(key: String, value: JSONNode)]? {
        if case .object(let m) = self { return m }
        return nil
    }

    var elements: [JSONNode]? {
        if case .array(let e) = self { return e }
        return nil
    }

    var string: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// An integer (an integral number without exponent or fraction).
    var int: Int64? {
        if case .number(let text) = self { return Int64(text) }
        return nil
    }

    var double: Double? {
        if case .number(let text) = self { return Double(text) }
        return nil
    }

    var bool: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

struct JSONError: Error, CustomStringConvertible {
    let path: String
    let offset: Int?
    let message: String

    init(path: String, offset: Int?, _ message: String) {
        (self.path, self.offset, self.message) = (path, offset, message)
    }

    var description: String { "\(path): " + (offset.map { "byte \($0): " } ?? "") + message }
}

/// Reads JSON (RFC 8259) from a position in a document. Strict: what `JSONWriter` writes and
/// any other valid JSON; nesting deeper than `maxDepth` is refused, not recursed into.
private struct JSONScanner {
    static let maxDepth = 64
    let document: JSONDocument
    var position: Int
    var bytes: UnsafeRawBufferPointer { document.bytes }

    init(_ document: JSONDocument, at position: Int) {
        self.document = document
        self.position = position
    }

    func error(_ message: String) -> JSONError { JSONError(path: document.path, offset: position, message) }

    mutating func skipSpace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    mutating func peek() throws -> UInt8 {
        skipSpace()
        guard position < bytes.count else { throw error("the document ends early") }
        return bytes[position]
    }

    mutating func expect(_ byte: UInt8) throws {
        guard try peek() == byte else { throw error("expected '\(Character(Unicode.Scalar(byte)))'") }
        position += 1
    }

    mutating func skipValue() throws -> Range<Int> {
        _ = try peek()
        let start = position
        try skip(depth: 0)
        return start..<position
    }

    private mutating func skip(depth: Int) throws {
        guard depth < Self.maxDepth else { throw error("nested deeper than \(Self.maxDepth) levels") }
        switch try peek() {
        case 0x7B:
            try container(close: 0x7D) { s in
                try s.skipString()
                try s.expect(0x3A)
                try s.skip(depth: depth + 1)
            }
        case 0x5B: try container(close: 0x5D) { s in try s.skip(depth: depth + 1) }
        case 0x22: try skipString()
        default: _ = try scalar()
        }
    }

    /// `{…}` or `[…]`: `member` reads each member, commas between.
    private mutating func container(close: UInt8, _ member: (inout JSONScanner) throws -> Void) throws {
        position += 1
        if try peek() == close {
            position += 1
            return
        }
        while true {
            try member(&self)
            let next = try peek()
            position += 1
            if next == close { return }
            guard next == 0x2C else {
                position -= 1
                throw error("expected ',' or '\(Character(Unicode.Scalar(close)))'")
            }
        }
    }

    mutating func members() throws -> [(key: String, range: Range<Int>)] {
        guard try peek() == 0x7B else { throw error("expected an object") }
        var out: [(key: String, range: Range<Int>)] = []
        try container(close: 0x7D) { s in
            let key = try s.string()
            try s.expect(0x3A)
            out.append((key, try s.skipValue()))
        }
        return out
    }

    /// The objects of an array, each with its members' ranges, in one pass.
    mutating func forEachObject(_ body: (Range<Int>, [(key: String, range: Range<Int>)]) throws -> Void) throws {
        guard try peek() == 0x5B else { throw error("expected an array") }
        try container(close: 0x5D) { s in
            _ = try s.peek()
            let start = s.position
            let members = try s.members()
            try body(start..<s.position, members)
        }
    }

    mutating func value(depth: Int) throws -> JSONNode {
        guard depth < Self.maxDepth else { throw error("nested deeper than \(Self.maxDepth) levels") }
        switch try peek() {
        case 0x7B:
            var members: [(key: String, value: JSONNode)] = []
            try container(close: 0x7D) { s in
                let key = try s.string()
                try s.expect(0x3A)
                members.append((key, try s.value(depth: depth + 1)))
            }
            return .object(members)
        case 0x5B:
            var elements: [JSONNode] = []
            try container(close: 0x5D) { s in elements.append(try s.value(depth: depth + 1)) }
            return .array(elements)
        case 0x22: return .string(try string())
        default: return try scalar()
        }
    }

    /// Past a string, its text unread (escapes are checked when it is read).
    mutating func skipString() throws {
        guard try peek() == 0x22 else { throw error("expected a string") }
        position += 1
        while position < bytes.count {
            switch bytes[position] {
            case 0x22:
                position += 1
                return
            case 0x5C: position += 2
            case 0..<0x20: throw error("a control character in a string")
            default: position += 1
            }
        }
        throw error("a string does not end")
    }

    /// A string, its escapes decoded.
    mutating func string() throws -> String {
        guard try peek() == 0x22 else { throw error("expected a string") }
        position += 1
        // Most strings (every key) have no escape: one copy.
        var end = position
        while end < bytes.count, bytes[end] != 0x22, bytes[end] != 0x5C, bytes[end] >= 0x20 { end += 1 }
        if end < bytes.count, bytes[end] == 0x22 {
            defer { position = end + 1 }
            return String(decoding: bytes[position..<end], as: UTF8.self)
        }
        var utf8: [UInt8] = []
        while true {
            guard position < bytes.count else { throw error("a string does not end") }
            let byte = bytes[position]
            position += 1
            switch byte {
            case 0x22: return String(decoding: utf8, as: UTF8.self)
            case 0x5C: try escape(into: &utf8)
            case 0..<0x20: throw error("a control character in a string")
            default: utf8.append(byte)
            }
        }
    }

    private mutating func escape(into utf8: inout [UInt8]) throws {
        guard position < bytes.count else { throw error("a string does not end") }
        let byte = bytes[position]
        position += 1
        switch byte {
        case 0x22, 0x5C, 0x2F: utf8.append(byte)
        case 0x62: utf8.append(0x08)
        case 0x66: utf8.append(0x0C)
        case 0x6E: utf8.append(0x0A)
        case 0x72: utf8.append(0x0D)
        case 0x74: utf8.append(0x09)
        case 0x75:
            var scalar = try hex4()
            if (0xD800..<0xDC00).contains(scalar) {  // a surrogate pair
                guard position + 1 < bytes.count, bytes[position] == 0x5C, bytes[position + 1] == 0x75 else { throw error("a lone surrogate") }
                position += 2
                let low = try hex4()
                guard (0xDC00..<0xE000).contains(low) else { throw error("a lone surrogate") }
                scalar = 0x10000 + (scalar - 0xD800) << 10 + (low - 0xDC00)
            }
            guard let s = Unicode.Scalar(scalar) else { throw error("a lone surrogate") }
            utf8.append(contentsOf: String(Character(s)).utf8)
        default: throw error("an unknown escape")
        }
    }

    private mutating func hex4() throws -> UInt32 {
        guard position + 4 <= bytes.count, let v = UInt32(String(decoding: bytes[position..<position + 4], as: UTF8.self), radix: 16) else {
            throw error("expected four hex digits")
        }
        position += 4
        return v
    }

    /// A number, `true`, `false` or `null`.
    private mutating func scalar() throws -> JSONNode {
        let start = position
        for (word, value) in [("true", JSONNode.bool(true)), ("false", .bool(false)), ("null", .null)] where matches(word) {
            position += word.utf8.count
            return value
        }
        if position < bytes.count, bytes[position] == 0x2D { position += 1 }
        let digits = position
        while position < bytes.count, (0x30...0x39).contains(bytes[position]) { position += 1 }
        guard position > digits, bytes[digits] != 0x30 || position == digits + 1 else {
            position = start
            throw error("expected a value")
        }
        if position < bytes.count, bytes[position] == 0x2E {
            position += 1
            try digitsAfter("a decimal point")
        }
        if position < bytes.count, bytes[position] | 0x20 == 0x65 {
            position += 1
            if position < bytes.count, bytes[position] == 0x2B || bytes[position] == 0x2D { position += 1 }
            try digitsAfter("an exponent")
        }
        return .number(String(decoding: bytes[start..<position], as: UTF8.self))
    }

    private mutating func digitsAfter(_ what: String) throws {
        let start = position
        while position < bytes.count, (0x30...0x39).contains(bytes[position]) { position += 1 }
        guard position > start else { throw error("expected digits after \(what)") }
    }

    private func matches(_ word: String) -> Bool {
        let utf8 = Array(word.utf8)
        return position + utf8.count <= bytes.count && bytes[position..<position + utf8.count].elementsEqual(utf8)
    }
}
