import FramescopeSynthetic
import Testing

@testable import FramescopeCore

/// The flow table's record store behaves as an array of its records: the same contents after any
/// run of appends, removals from the end, swaps and writes in place, across its growth by
/// `realloc`; a copy is a value of its own; every record it held is released once.
@Suite struct RecordStoreTests {
    /// A record with a reference, so that a record moved by its bytes, copied or released shows
    /// in the reference's count of live instances.
    final class Tracked {
        nonisolated(unsafe) static var live = 0
        let value: Int
        init(_ value: Int) { self.value = value; Tracked.live += 1 }
        deinit { Tracked.live -= 1 }
    }

    struct Record {
        var number: Int
        var tracked: Tracked
        var padding: (Int64, Int64, Int64) = (0, 0, 0)
    }

    @Test func behavesAsAnArrayAcrossItsGrowth() {
        let liveBefore = Tracked.live
        do {
            var generator = SplitMix64(seed: 7)
            var store = RecordStore<Record>(), model: [Record] = []
            var snapshot: (store: RecordStore<Record>, numbers: [Int])?
            for step in 0..<20_000 {
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<6:
                    let record = Record(number: step, tracked: Tracked(step))
                    store.append(record)
                    model.append(record)
                case 6 where !model.isEmpty:
                    #expect(store.removeLast().number == model.removeLast().number)
                case 7 where model.count > 1:
                    let i = Int.random(in: 0..<model.count, using: &generator), j = Int.random(in: 0..<model.count, using: &generator)
                    store.swapAt(i, j)
                    model.swapAt(i, j)
                case 8 where !model.isEmpty:
                    let i = Int.random(in: 0..<model.count, using: &generator)
                    store[i].number += 1_000_000
                    model[i].number += 1_000_000
                default:
                    if snapshot == nil && step > 5_000 { snapshot = (store, model.map(\.number)) }
                }
                #expect(store.count == model.count)
            }
            #expect(store.indices.map { store[$0].number } == model.map(\.number))
            #expect(store.indices.allSatisfy { store[$0].tracked.value == model[$0].tracked.value || store[$0].number != model[$0].number })
            // The copy taken midway kept its records while the original changed.
            if let snapshot { #expect(snapshot.store.indices.map { snapshot.store[$0].number } == snapshot.numbers) }
            store.removeAll()
            #expect(store.count == 0)
        }
        #expect(Tracked.live == liveBefore)
    }
}
