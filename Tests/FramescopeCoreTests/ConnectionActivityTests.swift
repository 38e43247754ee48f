import Testing

@testable import FramescopeCore

/// The victims of a connection limit: the least recently active, the lower ID first among
/// equals. Chosen by selection, held to the definition (sort by time and ID, take the first).
@Suite struct ConnectionActivityTests {
    @Test func theLeastRecentlyActiveAreTheSortsFirstWhateverTheTies() {
        var random = SystemRandomNumberGenerator()
        var scratch: [(lastSeen: Timestamp, slot: Int)] = []  // kept across calls, as the table keeps it
        for trial in 0..<2_000 {
            let n = Int.random(in: 0...200, using: &random)
            // Few distinct times in some trials (many ties), all distinct in others.
            let times = [2, 5, 1_000_000][trial % 3]
            let activity = (0..<n).map { slot in
                var a = ConnectionActivity(lastSeen: Timestamp(nanoseconds: Int64.random(in: 0..<Int64(times), using: &random)), bucket: 0, placeInBucket: slot)
                a.isClosed = Bool.random(using: &random)
                return a
            }
            let ids = (0..<n).map { _ in ConnectionID(Int.random(in: 0..<1_000_000, using: &random)) }
            let slots = (0..<n).shuffled(using: &random).map { Int32($0) }
            for closedOnly in [false, true] {
                let count = Int.random(in: 0...(n + 2), using: &random)
                let chosen = activity.leastRecentlyActive(count, closedOnly: closedOnly, among: slots, scratch: &scratch) { ids[$0] }
                let expected = slots.map(Int.init).filter { !closedOnly || activity[$0].isClosed }
                    .sorted { (activity[$0].lastSeen, ids[$0]) < (activity[$1].lastSeen, ids[$1]) }.prefix(count)
                // (IDs are unique in a table; here a tie of time and ID may take either slot.)
                #expect(Set(chosen.map { (activity[$0].lastSeen, ids[$0]) }.map { "\($0.0.nanoseconds)/\($0.1.rawValue)" })
                    == Set(expected.map { "\(activity[$0].lastSeen.nanoseconds)/\(ids[$0].rawValue)" }), "trial \(trial)")
                #expect(chosen.count == expected.count && Set(chosen).count == chosen.count)
            }
        }
    }
}
