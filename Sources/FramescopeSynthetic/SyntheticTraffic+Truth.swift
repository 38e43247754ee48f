import FramescopeCore

/// What a generated capture holds, written beside it (`synth --truth`) for checking an analysis.
extension SyntheticTraffic {
    /// What one direction of all connections holds, as `analyze` defines it: messages (those that
    /// start in the capture), partial and merged, the tails before the first boundary of a
    /// direction picked up mid-stream, junk regions and their bytes, messages cut by a close.
    public struct DirectionTruth: Sendable, Equatable {
        public var messages = 0
        public var partial = 0
        public var merged = 0
        public var leadingBytes = 0
        public var junkRegions = 0
        public var junkBytes = 0
        public var incomplete = 0
    }

    /// One message, for checking each message an analysis reports.
    public struct MessageTruth: Sendable, Equatable {
        public var clientPort: UInt16
        public var direction: Direction
        /// From the direction's first captured byte.
        public var offset: Int
        public var length: Int
    }

    /// What the generated capture holds, for checking an analysis against.
    public struct Truth: Sendable, Equatable {
        public var directions = PerDirection { _ in DirectionTruth() }
        public var spec: String
        public var packets = 0
        public var captureBytes = 0
        public var connections = 0
        public var messagesClientToServer = 0
        public var messagesServerToClient = 0
        public var payloadBytes = 0
        public var outOfOrderSegments = 0
        public var retransmittedSegments = 0
    }
}
