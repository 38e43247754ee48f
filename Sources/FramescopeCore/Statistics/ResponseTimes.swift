/// Service response time for any framed protocol (Wireshark's `-z srt`, `dns.time`): each
/// request the client completes waits in order for the server's next response; the time from
/// the request's last segment to the response's last segment (the frames where Wireshark
/// reassembles each) counts under the request's type.
///
/// Requests and responses pair in order (pipelined requests included). A SPEC that names its
/// responses (`DissectorSpec.responseTypes`: PostgreSQL's ReadyForQuery) pairs only those; the
/// server's other messages belong to the response in progress.
struct RequestQueue {
    /// The requests waiting, oldest first: a lone one in place (`only…`: a client that waits for
    /// each answer, most of them, allocated a list per connection for it — 50,000 open
    /// connections, 1.5 MB), from a second one on `pending[head...]` (completion time in ns,
    /// type), which then stays in use.
    private var pending: [(type: UInt64?, time: Int64)] = []
    private var onlyType: UInt64 = 0
    private var onlyTime: Int64 = 0
    private var head: Int32 = 0
    /// This connection's own tally: once its server has pushed far more than it answered, it is
    /// no request/response connection, and its messages are only counted from then on.
    /// (Saturating: four billion answers decide as well as more.)
    private var paired: UInt32 = 0, unpaired: UInt32 = 0
    private var holdsOnly = false, onlyIsTyped = false
    private(set) var pushing = false

    /// A connection keeps at most this many requests waiting; older ones are given up.
    static let limit = 256

    /// Requests waiting now.
    var waiting: Int { holdsOnly ? 1 : pending.count - Int(head) }
    /// Entries the list holds (waiting ones and given-up or answered ones not yet dropped): at
    /// most twice `limit`.
    var stored: Int { pending.count }

    mutating func request(type: UInt64?, at time: Int64, context: inout AnalysisContext) {
        if pending.isEmpty && !holdsOnly {
            (holdsOnly, onlyIsTyped, onlyType, onlyTime) = (true, type != nil, type ?? 0, time)
            return
        }
        if holdsOnly {  // a second one waits: both in the list from now on
            holdsOnly = false
            pending.append((onlyIsTyped ? onlyType : nil, onlyTime))
        }
        if waiting == Self.limit {
            head += 1
            context.responseTimes.abandoned += 1
        }
        if head > 0 && Int(head) == pending.count {
            pending.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= Self.limit {
            // A client that keeps asking with answers behind: drop what was answered or given up.
            pending.removeFirst(Int(head))
            head = 0
        }
        pending.append((type, time))
    }

    mutating func response(at time: Int64, context: inout AnalysisContext) {
        let request: (type: UInt64?, time: Int64)
        if holdsOnly {
            holdsOnly = false
            request = (onlyIsTyped ? onlyType : nil, onlyTime)
        } else if Int(head) < pending.count {
            request = pending[Int(head)]
            head += 1
        } else {
            context.responseTimes.unpaired += 1
            if unpaired < .max { unpaired += 1 }
            if unpaired >= 32 && UInt64(unpaired) > 4 * UInt64(paired) {
                pushing = true
                context.responseTimes.unanswered += waiting  // never paired from here on
                pending = []
                head = 0
            }
            return
        }
        if paired < .max { paired += 1 }
        context.responseTimes.add(type: request.type, nanoseconds: time - request.time)
    }

    /// Requests still waiting when the connection ends.
    func finish(context: inout AnalysisContext) { context.responseTimes.unanswered += waiting }
}

/// Response times of every connection, by request type (`UInt64.max`: untyped), with how well
/// the traffic paired: a protocol where the server pushes more than it answers is no
/// request/response protocol, and the report leaves the times out.
public struct ResponseTimes: Sendable {
    public static let untyped = UInt64.max
    /// Microseconds, per request type.
    public var byType: [UInt64: QuantileHistogram] {
        var all = large
        for (value, h) in small.enumerated() where h.count > 0 { all[value == 256 ? Self.untyped : UInt64(value)] = h }
        return all
    }
    /// Types below 256 (and untyped, at 256) by index, no hashing per response; larger ones hashed.
    private var small: [QuantileHistogram] = []
    private var large: [UInt64: QuantileHistogram] = [:]
    public private(set) var paired = 0
    /// Responses with no request waiting, requests never answered, requests given up.
    public internal(set) var unpaired = 0
    public internal(set) var unanswered = 0
    public internal(set) var abandoned = 0

    mutating func add(type: UInt64?, nanoseconds: Int64) {
        paired += 1
        let value = type ?? Self.untyped, microseconds = max(0, nanoseconds) / 1000
        let index = value == Self.untyped ? 256 : value < 256 ? Int(value) : -1
        guard index >= 0 else {
            large[value, default: QuantileHistogram(bits: 6)].add(microseconds)
            return
        }
        if index >= small.count { small += (small.count...index).map { _ in QuantileHistogram(bits: 6) } }
        small[index].add(microseconds)
    }

    /// Another set of connections' response times added to these.
    mutating func absorb(_ other: ResponseTimes) {
        paired += other.paired
        unpaired += other.unpaired
        unanswered += other.unanswered
        abandoned += other.abandoned
        if other.small.count > small.count { small += (small.count..<other.small.count).map { _ in QuantileHistogram(bits: 6) } }
        for (i, h) in other.small.enumerated() { small[i].merge(h) }
        for (value, h) in other.large { large[value, default: QuantileHistogram(bits: 6)].merge(h) }
    }

    /// Most responses answered a request and most requests got one (nine in ten each way).
    public var looksLikeRequestResponse: Bool {
        Self.looksLikeRequestResponse(paired: paired, unpaired: unpaired, unanswered: unanswered, abandoned: abandoned)
    }

    /// The same judgement from the counts alone (reports merged from shards).
    public static func looksLikeRequestResponse(paired: Int, unpaired: Int, unanswered: Int, abandoned: Int) -> Bool {
        paired > 0 && unpaired * 10 <= paired + unpaired && (unanswered + abandoned) * 10 <= paired + unanswered + abandoned
    }
}
