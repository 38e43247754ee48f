import FramescopeCore

/// What a shard of a sharded read does with what it is handed, in capture order: its
/// connections' packets (decoded by the reader; a worker's payloads lie in its batch), the moments
/// one flow table over all of them would sweep for idle and closed connections, and the end.
/// (Three closures rather than one taking an enum: the enum's payload, a packet and its decoding,
/// was copied out again at each call, 90 instructions a packet.)
public struct ShardBody {
    public let packet: (CaptureInfo, DecodedPacket) -> Void
    public let sweep: (Timestamp) -> Void
    public let end: () -> Void
    /// A worker's, after each batch: it has had every packet of its connections up to this
    /// frame (what it hands on as it goes is complete up to there).
    public let caughtUp: (UInt64) -> Void

    public init(
        packet: @escaping (CaptureInfo, DecodedPacket) -> Void, sweep: @escaping (Timestamp) -> Void, end: @escaping () -> Void,
        caughtUp: @escaping (UInt64) -> Void = { _ in }
    ) {
        (self.packet, self.sweep, self.end, self.caughtUp) = (packet, sweep, end, caughtUp)
    }
}

/// How a sharded read shares connections out: whole groups of them (`ConnectionBucket`, by a
/// symmetric hash of the 4-tuple: both directions alike) to each shard, so every packet of a
/// connection reaches the same one, and a group's limits are enforced by one. With a single
/// worker the reading thread has time to spare — reading and decoding a packet cost it 40–60% of
/// what analyzing it costs the worker — so it analyzes the first `readerBuckets` groups itself,
/// shard 0 (callgrind `--separate-threads`, 100 MB of 1,000 varint flows at `-t 2`: the reader
/// 174 M and the analysis 426 M instructions with one table, 326 M and 308 M with a quarter of
/// the groups on the reader). By the clock the reader also pays the kernel's copies of the file,
/// so it takes 12 of the 64 groups, not 16 (1 GB at `-t 2`, best of nine: random bodies 0.65 →
/// 0.60 s, varint 0.61 → 0.59 s). Packets that are not TCP over IP go to shard 0.
public struct ShardPlan: Sendable, Equatable {
    /// The threads fed in batches.
    public let workers: Int
    /// The groups the reading thread analyzes itself: the lowest ones.
    public let readerBuckets: Int

    /// The plan for `--threads N`: N − 1 workers (one group each at most), the reader with
    /// 3/16 of the groups when there is one worker.
    public init(threads: Int) {
        self.init(workers: max(1, threads - 1), readerBuckets: threads == 2 ? ConnectionBucket.count * 3 / 16 : 0)
    }

    public init(workers: Int, readerBuckets: Int) {
        precondition(readerBuckets >= 0 && readerBuckets < ConnectionBucket.count)
        self.workers = min(workers, ConnectionBucket.count - readerBuckets)
        self.readerBuckets = readerBuckets
    }

    /// The analyses a read feeds: the workers and, with its share, the reader's own (first).
    public var shards: Int { workers + (readerBuckets > 0 ? 1 : 0) }

    /// The shard a packet's connection belongs to.
    @inline(__always)
    public func shard(of packet: DecodedPacket) -> Int {
        guard case .tcp(let segment) = packet else { return 0 }
        return shard(ofBucket: segment.connectionBucket)
    }

    @inline(__always)
    func shard(ofBucket bucket: Int) -> Int {
        guard readerBuckets > 0 else { return bucket % workers }
        return bucket < readerBuckets ? 0 : 1 + (bucket - readerBuckets) % workers
    }

    /// The part of the groups shard `k` holds: what it gets of a limit shared out rather than
    /// held per group (`--max-buffer-total` and the like), so each binds where one table's would.
    public func share(ofShard k: Int) -> Double {
        Double((0..<ConnectionBucket.count).count { shard(ofBucket: $0) == k }) / Double(ConnectionBucket.count)
    }
}

extension CaptureReader {
    /// Reads on this thread and hands each packet, decoded, to the shard of its connection
    /// (`plan`): a worker's (`bodies[k]`) on a thread of its own, in batches (a lock per batch,
    /// not per packet), the reader's own share (`bodies[0]`, when the plan gives it one) here, as
    /// it is read. A shard sees its packets in capture order, with a sweep after each packet at
    /// which one table over all the connections would have swept (`SweepSchedule` over every
    /// packet). `handedOver` runs here after each batch handed to a worker, with the frame just
    /// read: the reader's own share has had every packet up to it; `whileWorkersEnd` after the
    /// last, before the workers are joined. Returns when every shard has had its `end`.
    public mutating func readSharded(
        plan: ShardPlan, shards bodies: [ShardBody], sweeps options: ReassemblyOptions, handedOver: (UInt64) -> Void = { _ in },
        whileWorkersEnd: () -> Void = {}
    ) {
        precondition(bodies.count == plan.shards)
        let own = plan.readerBuckets > 0 ? bodies[0] : nil
        let first = own == nil ? 0 : 1  // the first worker's shard
        let count = plan.workers
        let channels = (0..<count).map { _ in BatchChannel<PacketBatch>(batches: PacketBatch.inFlight(consumers: count)) }
        let threads = (0..<count).map { k in
            let (channel, body) = (channels[k], bodies[first + k])
            return Worker {
                while let batch = channel.takeFull() {
                    batch.forEachDecoded { info, packet in
                        if info.frame == 0 { body.sweep(info.timestamp) } else { body.packet(info, packet) }
                    }
                    body.caughtUp(batch.handedAt)
                    channel.putEmpty(batch)
                }
                body.end()
            }
        }
        // (Raw storage: an array captured by `handOff` and the read's closure had its every
        // access checked for exclusivity at run time, 60 instructions a packet. Unmanaged: a
        // batch taken out to append to was retained and released, an atomic write a packet to
        // an object the worker had just read.) A batch filling is retained once, while here.
        let batches = UnsafeMutableBufferPointer<Unmanaged<PacketBatch>>.allocate(capacity: count)
        _ = batches.initialize(from: channels.map { .passRetained($0.takeEmpty()) })
        defer { batches.deallocate() }
        func handOff(_ k: Int, at frame: UInt64) {
            guard batches[k]._withUnsafeGuaranteedRef({ $0.isFull }) else { return }
            let full = batches[k].takeRetainedValue()
            full.handedAt = frame
            channels[k].putFull(full)
            batches[k] = .passRetained(channels[k].takeEmpty())
            handedOver(frame)
        }
        var schedule = SweepSchedule(options: options)
        var lastFrame: UInt64 = 0
        read { info, bytes in
            lastFrame = info.frame
            let packet = PacketDecoder.decode(bytes, info: info)
            let k = plan.shard(of: packet) - first
            if k < 0 {
                own!.packet(info, packet)
            } else {
                batches[k]._withUnsafeGuaranteedRef { $0.append(info, bytes, decoded: packet) }
                handOff(k, at: info.frame)
            }
            guard schedule.advance(to: info.timestamp) else { return }
            own?.sweep(info.timestamp)
            for j in 0..<count {
                batches[j]._withUnsafeGuaranteedRef { $0.appendSweep(at: info.timestamp) }
                handOff(j, at: info.frame)
            }
        }
        for (channel, unmanaged) in zip(channels, batches) {
            let batch = unmanaged.takeRetainedValue()
            batch.handedAt = lastFrame
            if batch.count == 0 { channel.putEmpty(batch) } else { channel.putFull(batch) }
            channel.finish()
        }
        own?.end()
        whileWorkersEnd()
        for thread in threads { thread.join() }
    }
}
