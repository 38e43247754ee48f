import FramescopeSynthetic
import Testing

@testable import FramescopeCore

/// The request queue of response-time pairing holds a bounded number of entries however long a
/// client asks without answers, and counts what it gives up.
@Suite struct RequestQueueTests {
    @Test func aClientThatAsksWithoutAnswersKeepsTheQueueBounded() {
        var queue = RequestQueue(), context = AnalysisContext()
        for i in 0..<100_000 { queue.request(type: nil, at: Int64(i), context: &context) }
        #expect(queue.waiting == RequestQueue.limit)
        #expect(queue.stored <= 2 * RequestQueue.limit)
        #expect(context.responseTimes.abandoned == 100_000 - RequestQueue.limit)
        // The oldest waiting request answers the next response.
        queue.response(at: 200_000, context: &context)
        #expect(context.responseTimes.paired == 1)
        #expect(context.responseTimes.byType[ResponseTimes.untyped]?.maximum == Int64(200_000 - (100_000 - RequestQueue.limit)) / 1000)
        queue.finish(context: &context)
        #expect(context.responseTimes.unanswered == RequestQueue.limit - 1)
    }

    /// Requests and responses in any order pair as a plain first-in-first-out list would pair
    /// them — the lone request kept in place, the list from a second one, the list emptied and
    /// the lone one in place again — with what is given up, unpaired and unanswered counted alike,
    /// and a server that pushes recognised at the same response.
    @Test func pairsAsAListWouldWhereverTheRequestsWait() {
        var generator = SplitMix64(seed: 3)
        for run in 0..<300 {
            var queue = RequestQueue(), context = AnalysisContext()
            var model: [(type: UInt64?, time: Int64)] = [], paired = 0, unpaired = 0, abandoned = 0, pushing = false
            var byType: [UInt64: QuantileHistogram] = [:]
            let askFor = [1, 2, 3, 300][run % 4]  // how many requests a burst holds at most
            for step in 0..<400 {
                let time = Int64(step) * 1_000_000
                if Bool.random(using: &generator) {
                    for _ in 0..<Int.random(in: 1...askFor, using: &generator) {
                        let type: UInt64? = Bool.random(using: &generator) ? nil : UInt64.random(in: 0..<3, using: &generator)
                        if !pushing {
                            queue.request(type: type, at: time, context: &context)
                            if model.count == RequestQueue.limit { model.removeFirst(); abandoned += 1 }
                            model.append((type, time))
                        }
                    }
                } else if !pushing {
                    queue.response(at: time + 500_000, context: &context)
                    if model.isEmpty {
                        unpaired += 1
                        if unpaired >= 32 && unpaired > 4 * paired { pushing = true; model = [] }
                    } else {
                        let request = model.removeFirst()
                        byType[request.type ?? ResponseTimes.untyped, default: QuantileHistogram(bits: 6)].add((time + 500_000 - request.time) / 1000)
                        paired += 1
                    }
                }
                #expect(queue.waiting == model.count && queue.pushing == pushing)
            }
            queue.finish(context: &context)
            #expect(context.responseTimes.paired == paired && context.responseTimes.unpaired == unpaired)
            #expect(context.responseTimes.abandoned == abandoned && context.responseTimes.unanswered == model.count)
            #expect(context.responseTimes.byType == byType)
        }
    }
}

