/// A framing walked over one stream sample from a start, frame after frame, until a header does
/// not parse, a frame runs past the sample's end, or enough frames were seen. Inference and the
/// SPEC suggestions both judge a framing by its walks.
struct FrameWalk: Equatable {
    enum Ending: Equatable {
        /// The last frame ends where the sample ends.
        case atEnd
        /// The last frame runs past the sample's end (its length is known).
        case open
        /// A header that does not parse, at `end`.
        case malformed(MalformedReason)
        /// Stopped at `maxFrames`, or inside a header cut by the sample's end.
        case stopped
    }

    /// Where the first frame starts (after a preamble, or the bytes before a boundary found
    /// mid-stream).
    var start: Int
    /// Whole frames.
    var frames = 0
    /// Where the last whole frame ends.
    var end: Int
    var ending = Ending.stopped

    /// Walks `dissector` over `b` from `start`; `frame(start, length, body)` sees each whole frame.
    @inline(__always)
    static func run(
        _ dissector: AnyDissector, over b: UnsafeRawBufferPointer, from start: Int, atStreamStart: Bool = false, maxFrames: Int = .max,
        frame: (Int, Int, Int) -> Void = { _, _, _ in }
    ) -> FrameWalk {
        var walk = FrameWalk(start: start, end: start)
        var streamStart = atStreamStart
        while walk.frames < maxFrames {
            guard walk.end < b.count else {
                walk.ending = .atEnd
                return walk
            }
            switch dissector.decode(UnsafeRawBufferPointer(rebasing: b[walk.end...]), consumed: 0, atStreamStart: &streamStart) {
            case .frame(let length, _, let body):
                guard walk.end + length <= b.count else {
                    walk.ending = .open
                    return walk
                }
                frame(walk.end, length, body)
                walk.end += length
                walk.frames += 1
            case .preamble(let length):
                walk.end += min(length, b.count - walk.end)
                walk.start = walk.end
            case .needMoreData:
                // A delimiter not found before the end is a frame still open; a cut header is not known.
                walk.ending = dissector.delimiter != nil ? .open : .stopped
                return walk
            case .malformed(let reason):
                walk.ending = .malformed(reason)
                return walk
            }
        }
        return walk
    }
}
