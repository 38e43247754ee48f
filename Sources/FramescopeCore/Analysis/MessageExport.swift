/// `analyze --export-messages`: which messages to hand on as a capture of their own, and the
/// frames that carried them, collected as the analysis goes (a bit per frame number: a
/// million-packet capture costs 125 KB).
public struct MessageExport: Sendable {
    public enum Kind: String, CaseIterable, Sendable {
        /// Every message.
        case all
        /// Messages that arrived in two or more segments.
        case partial
        /// Segments that carried bytes of two or more messages.
        case merged
        /// Headers that did not frame (their segments).
        case malformed
    }

    public var kinds: Set<Kind>
    /// Only this connection's (its ID, as in the report).
    public var connection: Int?
    /// Only messages with one of these type values.
    public var types: Set<UInt64>?
    public private(set) var frames = FrameSet()

    public init(kinds: Set<Kind>, connection: Int? = nil, types: Set<UInt64>? = nil) {
        self.kinds = kinds
        self.connection = connection
        self.types = types
    }

    func wants(_ kind: Kind, connection id: ConnectionID, type: UInt64? = nil) -> Bool {
        // `all` is every message (and so every merged segment), not headers that did not frame.
        guard kinds.contains(kind) || (kinds.contains(.all) && kind != .malformed) else { return false }
        if let connection, connection != id.rawValue { return false }
        if let types, !(type.map(types.contains) ?? false) { return false }
        return true
    }

    mutating func add(_ frame: UInt64) { frames.insert(frame) }
}

/// Frame numbers as bits.
public struct FrameSet: Sendable, Equatable {
    private var words: [UInt64] = []
    public private(set) var count = 0

    public init() {}

    public mutating func insert(_ frame: UInt64) {
        let (word, bit) = (Int(frame >> 6), frame & 63)
        if word >= words.count { words += [UInt64](repeating: 0, count: max(word + 1 - words.count, words.count)) }
        if words[word] & (1 << bit) == 0 {
            words[word] |= 1 << bit
            count += 1
        }
    }

    public func contains(_ frame: UInt64) -> Bool {
        let word = Int(frame >> 6)
        return word < words.count && words[word] & (1 << (frame & 63)) != 0
    }
}
