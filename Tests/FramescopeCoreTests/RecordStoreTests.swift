import FramescopeSynthetic
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import FramescopeCore

/// The flow table's record store behaves as an array of its records: the same contents after any
/// run of appends, removals (from the end, or from a slot the last one fills), swaps and writes
/// in place, across its growth by `realloc`; a copy is a value of its own; every record it held
/// is released once; the pages its emptied tail held go back to the system.
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
                switch Int.random(in: 0..<11, using: &generator) {
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
                case 9 where !model.isEmpty:  // a finished connection dropped, the last moved in
                    let i = Int.random(in: 0..<model.count, using: &generator)
                    store.removeFillingFromLast(i)
                    let last = model.removeLast()
                    if i < model.count { model[i] = last }
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

    /// 100,000 records (4 MB) open, then 99,000 finished: the pages past the last record and
    /// the step kept for the next ones are no longer resident (`mincore`), the records left
    /// are intact, and the store grows again over the pages it gave back.
    @Test func anEmptiedTailGoesBackToTheSystem() {
        struct Plain { var number: Int, padding: (Int64, Int64, Int64, Int64) = (0, 0, 0, 0) }
        var store = RecordStore<Plain>()
        for n in 0..<100_000 { store.append(Plain(number: n)) }
        func residentPages(from byte: Int, to end: Int) -> (resident: Int, pages: Int) {
            let page = Int(sysconf(Int32(_SC_PAGESIZE)))
            let base = Int(bitPattern: UnsafeMutableRawPointer(store.block.base!))
            let from = (base + byte + page - 1) & ~(page - 1), to = (base + end) & ~(page - 1)
            guard to > from else { return (0, 0) }
            var vector = [UInt8](repeating: 0, count: (to - from) / page)
            #expect(mincore(UnsafeMutableRawPointer(bitPattern: from), to - from, &vector) == 0)
            return (vector.filter { $0 & 1 != 0 }.count, vector.count)
        }
        let stride = MemoryLayout<Plain>.stride, all = 100_000 * stride
        let open = residentPages(from: 0, to: all)
        #expect(open.resident == open.pages)
        for _ in 0..<99_000 { store.removeLast() }
        let kept = 1_000 * stride + RecordStore<Plain>.Block.releaseStep
        let tail = residentPages(from: kept, to: all)
        #expect(tail.pages > 500 && tail.resident == 0, "\(tail.resident) of \(tail.pages) pages past the records still resident")
        #expect(store.indices.map { store[$0].number } == Array(0..<1_000))
        for n in 1_000..<100_000 { store.append(Plain(number: n)) }
        #expect(store.indices.map { store[$0].number } == Array(0..<100_000))
    }
}
