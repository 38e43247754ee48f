import FramescopeCore

/// What a worker of a sharded read is handed, in capture order: its connections' packets, the
/// moments one flow table over all of them would sweep for idle and closed connections, and
/// the end.
public enum ShardEntry {
    /// A packet decoded by the reader, its payload in the worker's batch.
    case packet(CaptureInfo, DecodedPacket)
    case sweep(Timestamp)
    case end
}

/// How connections are shared out among workers: whole groups of them (`ConnectionBucket`, by
/// a symmetric hash of the 4-tuple: both directions alike) to each, so every packet of a
/// connection reaches the same worker, and a group's limits are enforced by one. Packets that
/// are not TCP over IP go to the first.
public enum ConnectionShards {
    public static func worker(of packet: UnsafeRawBufferPointer, linkType: LinkType, workers: Int) -> Int {
        worker(of: PacketDecoder.decode(packet, linkType: linkType), workers: workers)
    }

    public static func worker(of packet: DecodedPacket, workers: Int) -> Int {
        guard case .tcp(let segment) = packet else { return 0 }
        return segment.connectionBucket % workers
    }
}

extension CaptureReader {
    /// Reads on this thread and hands each packet, decoded, to the worker of its connection,
    /// each worker (`bodies[k]`) on a thread of its own, in batches (a lock per batch, not per
    /// packet). A worker sees its packets in capture order, with a sweep after each packet at
    /// which one table over all the connections would have swept (`SweepSchedule` over every
    /// packet). Returns when every worker has had `.end`.
    public mutating func readSharded(workers bodies: [(ShardEntry) -> Void], sweeps options: ReassemblyOptions) {
        let count = bodies.count
        let channels = (0..<count).map { _ in BatchChannel<PacketBatch>(batches: 4) }
        let threads = (0..<count).map { k in
            let (channel, body) = (channels[k], bodies[k])
            return Worker {
                while let batch = channel.takeFull() {
                    batch.forEachDecoded { info, packet in body(info.frame == 0 ? .sweep(info.timestamp) : .packet(info, packet)) }
                    channel.putEmpty(batch)
                }
                body(.end)
            }
        }
        var batches = channels.map { $0.takeEmpty() }
        func handOff(_ k: Int) {
            guard batches[k].isFull else { return }
            channels[k].putFull(batches[k])
            batches[k] = channels[k].takeEmpty()
        }
        var schedule = SweepSchedule(options: options)
        read { info, bytes in
            let packet = PacketDecoder.decode(bytes, info: info)
            let k = ConnectionShards.worker(of: packet, workers: count)
            batches[k].append(info, bytes, decoded: packet)
            handOff(k)
            guard schedule.advance(to: info.timestamp) else { return }
            for j in 0..<count {
                batches[j].appendSweep(at: info.timestamp)
                handOff(j)
            }
        }
        for (channel, batch) in zip(channels, batches) {
            if batch.count == 0 { channel.putEmpty(batch) } else { channel.putFull(batch) }
            channel.finish()
        }
        for thread in threads { thread.join() }
    }
}
