import FramescopeCore
import FramescopeSynthetic
import Foundation
import Testing

@testable import FramescopeCapture

/// How a sharded read shares connections out (`ShardPlan`), and that `readSharded` hands every
/// packet to its connection's shard once, in capture order — the reader's own share on the
/// reading thread.
struct ShardPlanTests {
    @Test(arguments: [1, 2, 3, 4, 7, 64, 65, 200])
    func everyGroupHasOneShardAndTheSharesAddUp(threads: Int) {
        let plan = ShardPlan(threads: threads)
        var groups = [Int](repeating: 0, count: plan.shards)
        for bucket in 0..<ConnectionBucket.count {
            let k = plan.shard(ofBucket: bucket)
            #expect((0..<plan.shards).contains(k))
            groups[k] += 1
        }
        #expect(groups.allSatisfy { $0 > 0 }, "a shard without a group: \(groups)")
        #expect(abs((0..<plan.shards).map(plan.share(ofShard:)).reduce(0, +) - 1) < 1e-9)
        // The workers' groups differ by one at most.
        let workers = plan.readerBuckets > 0 ? groups.dropFirst() : groups[...]
        #expect(workers.max()! - workers.min()! <= 1)
    }

    @Test func oneWorkerLeavesTheReaderThreeSixteenths() {
        let two = ShardPlan(threads: 2)
        #expect(two.workers == 1 && two.readerBuckets == 12 && two.shards == 2)
        #expect(two.share(ofShard: 0) == 0.1875)
        #expect(ShardPlan(threads: 1).shards == 1)
        for threads in 3...9 {
            let plan = ShardPlan(threads: threads)
            #expect(plan.readerBuckets == 0 && plan.shards == threads - 1)
        }
        #expect(ShardPlan(threads: 500).shards == ConnectionBucket.count)
    }

    /// 120 connections interleaved, and a packet that is not TCP: each shard gets the packets of
    /// its connections (both directions) in capture order, all of them once; the reader's share
    /// is handled on the calling thread, before `readSharded` returns. A worker says after each
    /// batch how far it has come (no packet of its up to that frame comes after), and the
    /// reader's hook runs on the calling thread after each hand-over, frames rising.
    @Test(arguments: [2, 3, 5])
    func readShardedHandsEachPacketToItsConnectionsShardInOrder(threads: Int) throws {
        let builder = PacketBuilder()
        let server = Endpoint("10.9.9.9:80")!
        var writer = CaptureFileWriter(linkType: .ethernet)
        var frames = 0
        for round in 0..<200 {  // (more than a batch for each of four workers)
            for c in 0..<120 {
                let client = Endpoint("10.0.\(c / 100).\(c % 100 + 1):\(2000 + c)")!
                let (from, to) = round % 2 == 0 ? (client, server) : (server, client)
                writer.add(builder.tcp(from: from, to: to, sequence: UInt32(round * 10), flags: [.ack], payload: [UInt8(c)]), at: Timestamp(nanoseconds: Int64(frames) * 1000))
                frames += 1
            }
        }
        writer.add([UInt8](repeating: 0, count: 20), at: Timestamp(nanoseconds: Int64(frames) * 1000))  // not IP
        frames += 1
        let path = scratchDirectory + "shards-\(UUID().uuidString).pcap"
        try Data(writer.bytes).write(to: URL(fileURLWithPath: path))

        let plan = ShardPlan(threads: threads)
        final class Seen: @unchecked Sendable {
            var frames: [UInt64] = []
            var clients: Set<UInt16> = []
            var ends = 0
            var onCaller = true
            var caughtUpTo: UInt64 = 0
            var caughtUps = 0
            var packetsAfterCatchingUp = 0
        }
        let seen = (0..<plan.shards).map { _ in Seen() }
        let caller = pthread_self()
        var handedOver: [UInt64] = [], hookOnCaller = true
        var reader = CaptureReader(paths: [path])
        reader.readSharded(
            plan: plan,
            shards: seen.map { s in
                func check() { if pthread_equal(pthread_self(), caller) == 0 { s.onCaller = false } }
                return ShardBody(
                    packet: { info, packet in
                        check()
                        if info.frame <= s.caughtUpTo { s.packetsAfterCatchingUp += 1 }
                        s.frames.append(info.frame)
                        if case .tcp(let segment) = packet { s.clients.insert(segment.source.port == 80 ? segment.destination.port : segment.source.port) }
                    },
                    sweep: { _ in check() },
                    end: {
                        check()
                        s.ends += 1
                    },
                    caughtUp: { frame in
                        s.caughtUpTo = frame
                        s.caughtUps += 1
                    })
            }, sweeps: ReassemblyOptions()
        ) { frame in
            if pthread_equal(pthread_self(), caller) == 0 { hookOnCaller = false }
            handedOver.append(frame)
        }
        #expect(hookOnCaller)
        #expect(!handedOver.isEmpty && handedOver == handedOver.sorted())
        #expect(reader.errors.isEmpty)
        #expect(seen.map(\.frames).joined().sorted() == (1...UInt64(frames)).map { $0 })
        for (k, s) in seen.enumerated() {
            #expect(s.frames == s.frames.sorted(), "shard \(k) out of order")
            #expect(s.ends == 1)
            #expect(s.onCaller == (plan.readerBuckets > 0 && k == 0), "shard \(k) ran on the wrong thread")
            #expect(s.packetsAfterCatchingUp == 0, "shard \(k) had packets after saying it had them all")
            if !s.onCaller { #expect(s.caughtUps >= 2, "worker \(k) caught up after each batch") }
        }
        #expect(seen[0].frames.last == UInt64(frames), "the packet that is not TCP goes to shard 0")
        // A connection's packets, both ways, reach one shard.
        for a in seen.indices { for b in seen.indices where a < b { #expect(seen[a].clients.isDisjoint(with: seen[b].clients)) } }
        #expect(seen.allSatisfy { !$0.clients.isEmpty })
    }
}
