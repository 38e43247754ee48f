/// Service response time for any framed protocol (Wireshark's `-z srt`, `dns.time`): each
/// request the client completes waits in order for the server's next response; the time from
/// the request's last segment to the response's last segment (the frames where Wireshark
/// reassembles each) counts under the request's type.
///
/// Requests and responses pair in order (pipelined requests included). A SPEC that names its
/// responses (`DissectorSpec.responseTypes`: PostgreSQL's ReadyForQuery) pairs only those; the
/// server's other messages belong to the response in progress.
struct RequestQueue {
    /// Completion times (ns) and types of the requests waiting, oldest at `head`.
    private var pending: [(type: UInt64?, time: Int64)] = []
    private var head = 0
    /// This connection's own tally: once its server has pushed far more than it answered, it is
    /// no request/response connection, and its messages are only counted from then on.
    private var paired = 0, unpaired = 0
    private(set) var pushing = false

    /// A connection keeps at most this many requests waiting; older ones are given up.
    static let limit = 256

    /// Requests waiting now.
    var waiting: Int { pending.count - head }
    /// Entries the storage holds (waiting ones and given-up or answered ones not yet dropped):
    /// at most twice `limit`.
    var stored: Int { pending.count }

    mutating func request(type: UInt64?, at time: Int64, context: inout AnalysisContext) {
        if waiting == Self.limit {
            head += 1
            context.responseTimes.abandoned += 1
        }
        if head > 0 && head == pending.count {
            pending.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= Self.limit {
            // A client that keeps asking with answers behind: drop what was answered or given up.
            pending.removeFirst(head)
            head = 0
        }
        pending.append((type, time))
    }

    mutating func response(at time: Int64, context: inout AnalysisContext) {
        guard head < pending.count else {
            context.responseTimes.unpaired += 1
            unpaired += 1
            if unpaired >= 32 && unpaired > 4 * paired {
                pushing = true
                context.responseTimes.unanswered += waiting  // never paired from here on
                pending = []
                head = 0
            }
            return
        }
        let request = pending[head]
        head += 1
        paired += 1
        context.responseTimes.add(type: request.type, nanoseconds: time - request.time)
    }

    /// Requests still waiting when the connection ends.
    func finish(context: inout AnalysisContext) { context.responseTimes.unanswered += pending.count - head }
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
