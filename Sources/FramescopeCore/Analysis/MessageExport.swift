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
    /// With `recordsMessages` (Wireshark "exported PDU" output): the selected messages' places,
    /// at most `maxMessages` (past it they are counted in `messagesLeftOut`).
    public var recordsMessages = false
    public private(set) var messages: [Place] = []
    public private(set) var messagesLeftOut = 0
    public static let maxMessages = 1 << 20

    /// Where a message's bytes are: a direction of a connection, stream offsets, its last frame.
    public struct Place: Sendable {
        public var connection: ConnectionID
        public var direction: Direction
        public var offset: Int64
        public var length: Int64
        public var lastFrame: UInt64
    }

    public init(kinds: Set<Kind>, connection: Int? = nil, types: Set<UInt64>? = nil) {
        self.kinds = kinds
        self.connection = connection
        self.types = types
    }

    mutating func add(_ place: Place) {
        if messages.count < Self.maxMessages { messages.append(place) } else { messagesLeftOut += 1 }
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
