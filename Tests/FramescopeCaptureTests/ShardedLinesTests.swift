import Foundation
import FramescopeCore
@testable import FramescopeReport
import FramescopeSynthetic
import Testing

/// A sharded run's lines (`ShardLines` → `ShardedLines`): each shard hands over the lines of the
/// connections it finished under its own IDs, with the first frames of those it opened and how
/// far it has come; the reading thread numbers them as one table would and writes each into the
/// report as soon as every shard is past its first frame and every lower ID is in. The document
/// is byte for byte the listing one table writes, however the shards lag and whatever the budget.
@Suite struct ShardedLinesTests {
    /// Connection `c` opens at step `c` (frame `c + 1`) in shard `shardOf[c]` and finishes at
    /// step `finishAt[c]`; shard `k` hands over every `every[k]` steps. After each collection
    /// the report holds exactly the connections below the first one not numbered yet (a first
    /// frame past some shard's progress) or not handed over.
    func check(shardOf: [Int], finishAt: [Int], every: [Int], budget: Int) throws {
        let source = ReportStreamTests.analyses.filter { $0.figures.clientToServer.messages > 0 }
        try #require(!source.isEmpty)
        let count = shardOf.count, shards = every.count
        var localID = [Int](repeating: 0, count: count), opened = [Int](repeating: 0, count: shards)
        for c in 0..<count {
            localID[c] = opened[shardOf[c]]
            opened[shardOf[c]] += 1
        }
        let lines = (0..<shards).map { _ in ShardLines() }
        let document = try ReportStreamTests.Document(), stream = ReportStream(fd: document.fd)
        let sharded = try ShardedLines(shards: lines, report: stream, memoryBudget: budget)
        var firstFrames = [FrameSequence](repeating: FrameSequence(), count: shards)
        var progress = [UInt64](repeating: 0, count: shards)
        var finished = [Bool](repeating: false, count: count), handed = [Bool](repeating: false, count: count)
        let steps = (finishAt.max() ?? 0) + 1
        for step in 0..<steps {
            if step < count { firstFrames[shardOf[step]].append(UInt64(step + 1)) }
            for c in 0..<count where finishAt[c] == step {
                lines[shardOf[c]].add(source[c % source.count].renumbered(ConnectionID(localID[c])), protobuf: nil)
                finished[c] = true
            }
            for k in 0..<shards where (step + 1) % every[k] == 0 {
                lines[k].handOver(firstFrames: firstFrames[k], progress: UInt64(step + 1))
                progress[k] = UInt64(step + 1)
                for c in 0..<count where shardOf[c] == k && finished[c] { handed[c] = true }
            }
            sharded.collect()
            let frontier = progress.min()!
            let due = (0..<count).first { !(UInt64($0 + 1) <= frontier && handed[$0]) } ?? count
            #expect(sharded.written == due, "step \(step), budget \(budget)")
        }
        for k in 0..<shards { lines[k].handOver(firstFrames: firstFrames[k], progress: .max, last: true) }
        sharded.collect()
        #expect(sharded.written == count)
        stream.open()
        sharded.finish(to: &stream.writer)
        stream.writer.endArray()
        stream.writer.endObject()
        stream.writer.finish()

        #expect(!stream.writer.failed)
        let whole = try ReportStreamTests.listedWhole((0..<count).map { source[$0 % source.count].renumbered(ConnectionID($0)) })
        #expect(document.bytes == whole, "budget \(budget): the documents differ")
    }

    func check(shardOf: [Int], finishAt: [Int], every: [Int]) throws {
        for budget in ReportStreamTests.budgets { try check(shardOf: shardOf, finishAt: finishAt, every: every, budget: budget) }
    }

    /// Short connections in three shards, one handing over every step, the others lagging.
    @Test func shortConnectionsGoInAsEveryShardComesPastThem() throws {
        var generator = SplitMix64(seed: 3)
        let count = 600
        let shardOf = (0..<count).map { _ in Int(generator.next() % 3) }
        let finishAt = (0..<count).map { $0 + Int(generator.next() % 12) }
        try check(shardOf: shardOf, finishAt: finishAt, every: [1, 4, 7])
    }

    /// The first connection lives to the end: every other line waits for it (past a small
    /// budget, in the files) and goes in at once after it.
    @Test func aLongLivedFirstConnectionHoldsEveryLineBack() throws {
        let count = 2_500
        let shardOf = (0..<count).map { $0 % 2 }
        let finishAt = (0..<count).map { $0 == 0 ? count + 5 : $0 + 1 }
        try check(shardOf: shardOf, finishAt: finishAt, every: [3, 5])
    }

    /// One shard opens nothing for a long stretch and hands over rarely: the others' lines wait
    /// on its progress, not on its connections.
    @Test func aQuietShardHoldsNumberingBackUntilItCatchesUp() throws {
        let count = 400
        let shardOf = (0..<count).map { $0 < 10 || $0 > 390 ? 1 : 0 }
        let finishAt = (0..<count).map { $0 + 2 }
        try check(shardOf: shardOf, finishAt: finishAt, every: [1, 50])
    }
}
