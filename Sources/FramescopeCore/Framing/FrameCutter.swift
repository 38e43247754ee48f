/// Cuts a byte stream into frames with a dissector, one step at a time, in the manner of
/// swift-nio's `NIOSingleStepByteToMessageProcessor`: the caller asks for the next step at a
/// position in the bytes it holds and gets back what happened there and where to go on. A frame
/// begins at the first step after the previous one ended (or after `reset`).
///
/// Only a frame's start is buffered (at most the dissector's `headerLength`, or the bytes a
/// delimiter scan still has to look at); a body is skipped by counting, so a claimed length is
/// never allocated.
///
/// ```
/// idle → header ─buffered→ header … ─decided→ decided ─content→ body ─content(ends)→ idle
///          └──────────────── malformed → idle (the cutter is reset)
/// ```
struct FrameCutter {
    /// A frame whose header was read.
    struct Decision: Equatable {
        var length: Int
        var type: UInt64?
        /// Where the body starts in the frame.
        var body: Int
        /// Protocol bytes that are not a message (see `DecodeStep.preamble`).
        var isPreamble: Bool
        /// Bytes of the frame buffered before the current chunk (`withBufferedHeader` shows them).
        var buffered: Int
        /// Bytes of the frame scanned and dropped before them (delimiter framing).
        var scanned: Int
    }

    /// A header that does not parse. The caller takes the frame's buffered bytes with
    /// `takeMalformed`, which resets the cutter: framing starts again only where the caller's
    /// recovery says.
    struct Malformed {
        var reason: MalformedReason
        /// The frame's bytes buffered before the current chunk (what `takeMalformed` returns).
        var buffered: Int
        /// The frame's bytes scanned and dropped before those.
        var scanned: Int
    }

    enum Step {
        /// Bytes kept as the frame's header until the dissector can decide.
        case buffered
        /// The header decided the frame (nothing consumed); its bytes follow as `content`.
        case decided(Decision)
        /// `count` bytes of the decided frame; `ends` when they are its last.
        case content(count: Int, ends: Bool)
        case malformed(Malformed)
    }

    private enum Phase {
        case idle
        case header
        case decided(remaining: Int64, buffered: Int)
        case body(remaining: Int64)
    }

    /// The SPEC's dissector, shared with every direction it frames.
    let shared: SharedDissector
    /// Still at the stream's start, where some protocols frame differently.
    private var atStreamStart: Bool
    private var phase = Phase.idle
    /// Bytes of the current frame's start, not yet decided on.
    private var header: [UInt8] = []
    /// Bytes of the current frame already scanned and dropped (delimiter framing).
    private(set) var consumed = 0

    init(_ shared: SharedDissector) {
        self.shared = shared
        atStreamStart = shared.dissector.hasStreamStart
    }

    /// The next step at `bytes[i...]` (`i < bytes.count`), and the position after it.
    @inline(__always)
    mutating func next(_ bytes: UnsafeRawBufferPointer, from i: Int) -> (step: Step, next: Int) {
        switch phase {
        case .idle, .header:
            phase = .header
            let available = bytes.count - i
            if header.isEmpty {
                let step = shared.decode(bytes.dropFirst(i), consumed: consumed, atStreamStart: &atStreamStart)
                return decide(step, buffered: 0, taken: available, bytes, at: i)
            }
            let buffered = header.count, headerLength = shared.headerLength
            let room = headerLength == .max ? available : max(0, headerLength - buffered)
            let taken = min(available, room)
            header.append(contentsOf: bytes[i..<(i + taken)])
            let step = header.withUnsafeBytes { shared.decode($0, consumed: consumed, atStreamStart: &atStreamStart) }
            return decide(step, buffered: buffered, taken: taken, bytes, at: i)
        case .decided(let remaining, _):
            if !header.isEmpty { header.removeAll(keepingCapacity: true) }
            consumed = 0
            return content(remaining, available: bytes.count - i, at: i)
        case .body(let remaining):
            return content(remaining, available: bytes.count - i, at: i)
        }
    }

    /// Acts on a decode step over `buffered` header bytes followed by `taken` bytes from `i`.
    private mutating func decide(
        _ step: DecodeStep, buffered: Int, taken: Int, _ bytes: UnsafeRawBufferPointer, at i: Int
    ) -> (step: Step, next: Int) {
        switch step {
        case .frame(let length, let type, let body):
            return decided(Decision(length: length, type: type, body: body, isPreamble: false, buffered: buffered, scanned: consumed), at: i)
        case .preamble(let length):
            return decided(Decision(length: length, type: nil, body: length, isPreamble: true, buffered: buffered, scanned: consumed), at: i)
        case .needMoreData(let scanned):
            consumed += scanned
            if buffered == 0 && header.isEmpty {
                header.append(contentsOf: bytes[(i + scanned)...])
            } else {
                header.removeFirst(min(scanned, header.count))
            }
            precondition(taken > 0 || bytes.count == i, "dissector needs more than its headerLength")
            return (.buffered, i + taken)
        case .malformed(let reason):
            return (.malformed(Malformed(reason: reason, buffered: buffered, scanned: consumed)), i)
        }
    }

    private mutating func decided(_ decision: Decision, at i: Int) -> (step: Step, next: Int) {
        let remaining = Int64(decision.length - decision.scanned - decision.buffered)
        precondition(remaining >= 0, "a frame shorter than the bytes it was decided on")
        phase = .decided(remaining: remaining, buffered: decision.buffered)
        return (.decided(decision), i)
    }

    private mutating func content(_ remaining: Int64, available: Int, at i: Int) -> (step: Step, next: Int) {
        let n = Int(min(remaining, Int64(available)))
        if Int64(n) == remaining {
            phase = .idle
            return (.content(count: n, ends: true), i + n)
        }
        phase = .body(remaining: remaining - Int64(n))
        return (.content(count: n, ends: false), i + n)
    }

    /// The header bytes a decision was made on that came before the current chunk.
    func withBufferedHeader<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        guard case .decided(_, let buffered) = phase else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return header.withUnsafeBytes { body($0.slice(from: 0, count: buffered)) }
    }

    /// Up to `limit` bytes of a header still waiting for a decision (evidence of a cut message).
    func pendingHeader(limit: Int) -> [UInt8] { Array(header.prefix(limit)) }

    /// `length` bytes of the body being skipped went missing (a capture gap). Returns nil when
    /// no body is being skipped or the gap reaches past it; else whether the frame ended.
    mutating func skipBody(_ length: Int64) -> Bool? {
        guard case .body(let remaining) = phase, remaining >= length else { return nil }
        if remaining == length {
            phase = .idle
            return true
        }
        phase = .body(remaining: remaining - length)
        return false
    }

    /// After a `malformed` step: the frame's bytes buffered before the current chunk; the cutter
    /// is reset.
    mutating func takeMalformed(_ malformed: Malformed) -> [UInt8] {
        defer { reset() }
        return Array(header.prefix(malformed.buffered))
    }

    /// Forgets the frame in progress; framing goes on as past the stream's start.
    mutating func reset() {
        header.removeAll(keepingCapacity: true)
        consumed = 0
        atStreamStart = false
        phase = .idle
    }
}
