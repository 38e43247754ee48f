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
}
