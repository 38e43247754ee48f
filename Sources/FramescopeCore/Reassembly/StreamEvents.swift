/// Identifies a connection: assigned in order of first appearance from 0, like tshark's
/// `tcp.stream`. A new SYN on a reused 4-tuple gets a new ID.
public struct ConnectionID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: Int
    public init(_ rawValue: Int) { self.rawValue = rawValue }
    public static func < (a: ConnectionID, b: ConnectionID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { String(rawValue) }
}

public enum Direction: Int, CaseIterable, Sendable, CustomStringConvertible {
    case clientToServer = 0
    case serverToClient = 1

    public var reversed: Direction { self == .clientToServer ? .serverToClient : .clientToServer }
    public var description: String { self == .clientToServer ? "client-to-server" : "server-to-client" }
}

/// How the segment that carried some bytes was sent, as far as the capture tells: what the
/// framing statistics attribute a split message or a glued segment to.
public struct SegmentTraits: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Longer than the MSS the receiver announced: TSO/GSO or GRO/LRO at the capture host.
    public static let overMSS = SegmentTraits(rawValue: 1 << 0)
    /// As long as a segment can be (the MSS, less room for options): the sender had more.
    public static let fullSized = SegmentTraits(rawValue: 1 << 1)
    /// Ends exactly at the right edge of the receiver's advertised window.
    public static let windowLimited = SegmentTraits(rawValue: 1 << 2)
    /// Sent, with nothing else in flight, right after the receiver's ACK of everything before
    /// it: data held while earlier data was unacknowledged (Nagle, or the congestion window).
    public static let releasedByAck = SegmentTraits(rawValue: 1 << 3)
    /// Carries bytes already sent: a retransmission that also brought new ones.
    public static let retransmitted = SegmentTraits(rawValue: 1 << 4)
}

/// Reassembled bytes, in order, with the provenance of the segment that carried them.
/// `bytes` is borrowed: valid only during the `StreamSink.data` call.
public struct StreamChunk {
    public var connection: ConnectionID
    public var direction: Direction
    /// Offset in sequence space from the direction's first byte (gaps included).
    public var offset: Int64
    /// Offset in the captured stream, gaps removed: where these bytes land in an extracted file.
    public var capturedOffset: Int64
    public var bytes: UnsafeRawBufferPointer
    /// 1-based frame number of the segment that carried these bytes.
    public var frame: UInt64
    public var timestamp: Timestamp
    /// The direction began without a SYN: its first byte may be inside a message.
    public var midStream: Bool
    /// How the segment was sent.
    public var traits: SegmentTraits

    public init(
        connection: ConnectionID, direction: Direction, offset: Int64, capturedOffset: Int64, bytes: UnsafeRawBufferPointer,
        frame: UInt64, timestamp: Timestamp, midStream: Bool = false, traits: SegmentTraits = []
    ) {
        self.connection = connection
        self.direction = direction
        self.offset = offset
        self.capturedOffset = capturedOffset
        self.bytes = bytes
        self.frame = frame
        self.timestamp = timestamp
        self.midStream = midStream
        self.traits = traits
    }
}

public enum GapReason: String, Sendable {
    /// Sequence space never seen in the capture, skipped at the end of the connection.
    case notCaptured = "not-captured"
    /// Payload the snaplen cut off.
    case truncatedPayload = "truncated-payload"
    /// Skipped early because an out-of-order buffer limit was reached.
    case bufferLimit = "buffer-limit"
}

/// Bytes that are missing from a direction's stream. Never filled with invented bytes.
public struct StreamGap: Sendable, Equatable {
    public var connection: ConnectionID
    public var direction: Direction
    public var offset: Int64
    public var capturedOffset: Int64
    public var length: Int64
    public var reason: GapReason
}

/// A retransmitted or overlapping copy whose bytes differ from the copy already kept
/// (the first copy wins, as in tshark's "follow TCP stream").
public struct StreamConflict: Sendable, Equatable {
    public var connection: ConnectionID
    public var direction: Direction
    public var offset: Int64
    public var length: Int64
    /// The frame that carried the differing copy.
    public var frame: UInt64
}

/// Receives the reassembled streams. The flow table is generic over it, so calls are static.
///
/// A sink may keep state per connection (`ConnectionState`): the flow table stores it in the
/// connection's own record, created by `connectionOpened` and handed back with every event of
/// that connection, so a sink needs no table of its own and finds its state without a lookup.
public protocol StreamSink {
    associatedtype ConnectionState = Void
    mutating func connectionOpened(_ connection: ConnectionInfo) -> ConnectionState
    mutating func data(_ chunk: StreamChunk, state: inout ConnectionState)
    mutating func gap(_ gap: StreamGap, state: inout ConnectionState)
    mutating func conflict(_ conflict: StreamConflict, state: inout ConnectionState)
    /// Called once per connection, when it is finalized (timeout, limit or end of input).
    mutating func connectionClosed(_ summary: ConnectionSummary, state: consuming ConnectionState)
    /// `connectionClosed`, the summary given to keep: the flow table's call. A sink that keeps
    /// it (the analyzer, in the connection's analysis) takes it without a copy, which retained
    /// every box the summary holds and released them again (a connection each).
    mutating func connectionClosed(taking summary: consuming ConnectionSummary, state: consuming ConnectionState)
}

extension StreamSink {
    public mutating func conflict(_ conflict: StreamConflict, state: inout ConnectionState) {}

    public mutating func connectionClosed(taking summary: consuming ConnectionSummary, state: consuming ConnectionState) {
        connectionClosed(summary, state: state)
    }
}

/// A sink that keeps nothing per connection.
public protocol StatelessStreamSink: StreamSink where ConnectionState == Void {
    mutating func connectionOpened(_ connection: ConnectionInfo)
    mutating func data(_ chunk: StreamChunk)
    mutating func gap(_ gap: StreamGap)
    mutating func conflict(_ conflict: StreamConflict)
    mutating func connectionClosed(_ summary: ConnectionSummary)
}

extension StatelessStreamSink {
    public mutating func connectionOpened(_ connection: ConnectionInfo) {}
    public mutating func data(_ chunk: StreamChunk) {}
    public mutating func gap(_ gap: StreamGap) {}
    public mutating func conflict(_ conflict: StreamConflict) {}

    public mutating func data(_ chunk: StreamChunk, state: inout Void) { data(chunk) }
    public mutating func gap(_ gap: StreamGap, state: inout Void) { self.gap(gap) }
    public mutating func conflict(_ conflict: StreamConflict, state: inout Void) { self.conflict(conflict) }
    public mutating func connectionClosed(_ summary: ConnectionSummary, state: consuming Void) { connectionClosed(summary) }
}

/// Two sinks fed the same events, in order: `first`, then `second` (a connection's end taken,
/// `second` first: `first` may keep the summary).
public struct SinkPair<First: StreamSink, Second: StreamSink>: StreamSink {
    public var first: First
    public var second: Second

    public struct ConnectionState {
        public var first: First.ConnectionState
        public var second: Second.ConnectionState
    }

    public init(_ first: First, _ second: Second) {
        self.first = first
        self.second = second
    }

    public mutating func connectionOpened(_ connection: ConnectionInfo) -> ConnectionState {
        ConnectionState(first: first.connectionOpened(connection), second: second.connectionOpened(connection))
    }

    public mutating func data(_ chunk: StreamChunk, state: inout ConnectionState) {
        first.data(chunk, state: &state.first)
        second.data(chunk, state: &state.second)
    }

    public mutating func gap(_ gap: StreamGap, state: inout ConnectionState) {
        first.gap(gap, state: &state.first)
        second.gap(gap, state: &state.second)
    }

    public mutating func conflict(_ conflict: StreamConflict, state: inout ConnectionState) {
        first.conflict(conflict, state: &state.first)
        second.conflict(conflict, state: &state.second)
    }

    public mutating func connectionClosed(_ summary: ConnectionSummary, state: consuming ConnectionState) {
        let state = state
        first.connectionClosed(summary, state: state.first)
        second.connectionClosed(summary, state: state.second)
    }

    public mutating func connectionClosed(taking summary: consuming ConnectionSummary, state: consuming ConnectionState) {
        let state = state
        second.connectionClosed(summary, state: state.second)
        first.connectionClosed(taking: summary, state: state.first)
    }
}
