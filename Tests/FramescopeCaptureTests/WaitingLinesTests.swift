@testable import FramescopeReport
import Testing

/// The memory connection lines wait in: each read back whole, in any order, chunks freed with
/// their last line, the budget never exceeded.
struct WaitingLinesTests {
    private func line(_ id: Int, length: Int) -> [UInt8] {
        (0..<length).map { UInt8(truncatingIfNeeded: id &* 31 &+ $0) }
    }

    @Test func linesReadBackInAnyOrderFreeTheirChunks() {
        var memory = WaitingLines(budget: 64 << 10)
        #expect(memory.chunkSize == 8 << 10)
        var entries: [(id: Int, entry: UInt64)] = []
        var id = 0
        // Lines of many sizes until the budget says no: eight chunks of 8 KiB.
        while true {
            let bytes = line(id, length: 1 + (id * 97) % 900)
            guard let entry = bytes.withUnsafeBytes({ memory.keep($0) }) else { break }
            #expect(entry & WaitingLines.flag != 0)
            entries.append((id, entry))
            id += 1
        }
        #expect(entries.count > 40)
        #expect(memory.bytes == 64 << 10)
        // Read in a shuffled order (as connections finishing out of ID order are read): each line whole.
        var order = entries
        var seed: UInt64 = 7
        order.sort { a, b in
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return (a.id ^ Int(seed >> 60)) < (b.id ^ Int(seed >> 61))
        }
        for kept in order {
            let expected = line(kept.id, length: 1 + (kept.id * 97) % 900)
            #expect(memory.read(kept.entry) { Array($0) } == expected)
        }
        // Each chunk is freed with its last line (the one being filled was left when the budget said no).
        #expect(memory.bytes == 0)
        let again = line(1, length: 8 << 10 - 64)
        let entry = again.withUnsafeBytes { memory.keep($0) }
        #expect(entry != nil)
        #expect(memory.read(entry!) { Array($0) } == again)
        // The chunk being filled stays for the next line; closing frees it.
        #expect(memory.bytes == memory.chunkSize)
        memory.close()
        #expect(memory.bytes == 0)
    }

    /// Lines kept and read for far longer than the budget lasts: the emptied chunks take the
    /// new lines (the chunks are the budget's, never more), each line read back whole.
    @Test func emptiedChunksTakeNewLinesForever() {
        var memory = WaitingLines(budget: 64 << 10)
        var waiting: [(id: Int, entry: UInt64)] = []
        var id = 0, kept = 0
        for round in 0..<200 {
            // A few hundred lines in, then all but the last few of them out, oldest first.
            for _ in 0..<(20 + round % 30) {
                let bytes = line(id, length: 1 + (id * 131) % 600)
                if let entry = bytes.withUnsafeBytes({ memory.keep($0) }) {
                    waiting.append((id, entry))
                    kept += 1
                }
                #expect(memory.bytes <= 64 << 10)
                id += 1
            }
            let keep = round % 3 == 0 ? 0 : 5
            while waiting.count > keep {
                let (id, entry) = waiting.removeFirst()
                #expect(memory.read(entry) { Array($0) } == line(id, length: 1 + (id * 131) % 600))
            }
        }
        #expect(kept == id)  // the budget was never short: the chunks were reused
        #expect(id * 300 > 8 * (64 << 10))  // (many times the budget's bytes went through)
        for (_, entry) in waiting { memory.discard(entry) }
        memory.close()
        #expect(memory.bytes == 0)
    }

    @Test func lineTooLongOrBudgetTooSmallIsRefused() {
        var small = WaitingLines(budget: 4096)
        #expect(small.chunkSize == 0)
        #expect([1, 2, 3].withUnsafeBytes { small.keep($0) } == nil)
        var memory = WaitingLines(budget: 64 << 10)
        #expect(memory.chunkSize == 8 << 10)
        let long = [UInt8](repeating: 1, count: 8 << 10)
        #expect(long.withUnsafeBytes { memory.keep($0) } == nil)
        let entry = [UInt8](repeating: 2, count: 100).withUnsafeBytes { memory.keep($0) }
        #expect(entry != nil)
        memory.discard(entry!)
        memory.close()
        #expect(memory.bytes == 0)
    }
}
