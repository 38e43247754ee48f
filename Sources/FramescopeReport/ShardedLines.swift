import FramescopeCore

#if canImport(Glibc)
import Glibc
#endif

/// A shard's side of a sharded JSON report that lists every connection (`--threads` past 1):
/// each finished connection's line, under the shard's own ID (`add`), and after each batch of
/// packets what was written since, with the first frames of the connections the shard opened
/// and how far in the capture it has come (`handOver`: a lock per batch). The reading thread
/// takes it (`ShardedLines`) and writes the lines into the report under the capture's IDs as the
/// run goes, where they waited in files for the end of the run before (varint-50k at `-t 2`:
/// 28 MB of lines copied after the read, 25–30 ms on the reading thread alone).
public final class ShardLines: @unchecked Sendable {
    typealias Line = (id: Int, start: Int, idAt: Int)

    /// What one hand-over carries.
    struct Parcel {
        var bytes: ByteBlock?
        /// Each line: its connection's ID in the shard, where the line starts in `bytes`, and
        /// where that ID starts in the line.
        var lines: [Line] = []
        var firstFrames: [UInt64] = []
        /// Every packet of the shard's connections up to this frame has been analyzed.
        var progress: UInt64 = 0
        /// The shard's last: it has ended.
        var isLast = false
    }

    /// Past these many bytes of lines a parcel goes without waiting for the batch's end: the end
    /// of a run finishes every connection still open at once (50,000 of them: 28 MB of lines).
    /// Less than the writer's buffer by more than a line takes, so that a parcel is the buffer
    /// itself, not a copy (`JSONWriter.takeCollected`).
    static let parcelBytes = 48 << 10

    // (Unchecked: the shard's thread alone writes lines and hands them over; `handed` is
    // guarded by `mutex`. The dynamic checks cost 130 instructions a line.)
    @exclusivity(unchecked) private var writer = JSONWriter(collecting: .lines)
    @exclusivity(unchecked) private var filling = Parcel()
    /// Where `filling`'s bytes start among all the writer wrote.
    @exclusivity(unchecked) private var fillingStart = 0
    @exclusivity(unchecked) private var firstFramesRead = FrameSequence.Cursor()
    private var mutex = pthread_mutex_t()
    @exclusivity(unchecked) private var handed: [Parcel] = []
    /// Blocks of lines the reading thread has written out and given back (guarded by `mutex`),
    /// and one taken for the next parcel: a new block of 68 KiB a parcel cost the worker a
    /// `malloc` that consolidated its free chunks, and page faults (varint-50k at `-t 2`: 16 M
    /// instructions, 5% of its time by `perf` with the copy that was made into it).
    @exclusivity(unchecked) private var given: [ByteBlock] = []
    @exclusivity(unchecked) private var spare: ByteBlock?
    /// The same for the parcels' lists of lines (a list a parcel, grown line by line, cost as
    /// much as the blocks), and for the list of parcels handed over (`take` swaps it for the
    /// reading thread's emptied one).
    @exclusivity(unchecked) private var givenLines: [[Line]] = []
    @exclusivity(unchecked) private var spareLines: [Line] = []
    static let maxGiven = 4
    /// Rung at each hand-over (`ShardedLines` sets it before the run).
    var bell: Bell?

    public init() { pthread_mutex_init(&mutex, nil) }

    deinit { pthread_mutex_destroy(&mutex) }

    /// A finished connection's line (on the shard's thread).
    func add(_ analysis: ConnectionAnalysis, protobuf: ProtobufCheck?) {
        let start = writer.position
        var idAt = 0
        analysis.writeJSON(to: &writer, protobuf: protobuf, idAt: &idAt)
        filling.lines.append((analysis.summary.info.id.rawValue, start - fillingStart, idAt - start))
        if writer.position - fillingStart >= Self.parcelBytes { send() }
    }

    /// Hands the lines written since the last hand-over over, with the first frames `table`
    /// recorded since (its `firstFrames`) and `progress` (on the shard's thread); `last`, at the
    /// shard's end, when every connection has finished.
    public func handOver(firstFrames: FrameSequence, progress: UInt64, last: Bool = false) {
        firstFrames.appended(since: &firstFramesRead, into: &filling.firstFrames)
        filling.progress = last ? .max : progress
        filling.isLast = last
        send()
    }

    /// `filling` to the reading thread; the next parcel has its progress until told more.
    private func send() {
        let lines = filling.lines.count
        if lines > 0 {
            filling.bytes = writer.takeCollected(spare: spare)
            spare = nil
            fillingStart = writer.position
        }
        let progress = filling.progress
        var next = Parcel()
        if lines > 0 { swap(&next.lines, &spareLines) } else { swap(&next.lines, &filling.lines) }  // (empty: its room stays)
        pthread_mutex_lock(&mutex)
        handed.append(filling)
        if spare == nil { spare = given.popLast() }
        if lines > 0, let list = givenLines.popLast() { spareLines = list }
        pthread_mutex_unlock(&mutex)
        bell?.ring()
        filling = next
        filling.progress = progress
    }

    /// What was handed over since the last call (on the reading thread), in place of
    /// `parcels`, which were taken before and are given back emptied.
    func take(_ parcels: inout [Parcel]) {
        parcels.removeAll(keepingCapacity: true)
        pthread_mutex_lock(&mutex)
        swap(&parcels, &handed)
        pthread_mutex_unlock(&mutex)
    }

    /// The parcels the reading thread has written out, emptied: their blocks and lists of lines
    /// for the shard to fill again.
    func giveBack(_ parcels: inout [Parcel]) {
        guard parcels.contains(where: { $0.bytes != nil }) else { return parcels.removeAll(keepingCapacity: true) }
        pthread_mutex_lock(&mutex)
        for i in parcels.indices {
            guard let block = parcels[i].bytes else { continue }
            if given.count < Self.maxGiven {
                block.reset()
                given.append(block)
            }
            if givenLines.count < Self.maxGiven {
                var list: [Line] = []
                swap(&list, &parcels[i].lines)  // (out of the parcel: its only reference, emptied in place)
                list.removeAll(keepingCapacity: true)
                givenLines.append(list)
            }
        }
        pthread_mutex_unlock(&mutex)
        parcels.removeAll(keepingCapacity: true)
    }

    /// Rung by the shards as they hand over; the reading thread waits on it while they finish.
    final class Bell: @unchecked Sendable {
        private var mutex = pthread_mutex_t()
        private var rung = pthread_cond_t()
        private var rings = 0

        init() {
            pthread_mutex_init(&mutex, nil)
            pthread_cond_init(&rung, nil)
        }

        deinit {
            pthread_mutex_destroy(&mutex)
            pthread_cond_destroy(&rung)
        }

        func ring() {
            pthread_mutex_lock(&mutex)
            rings += 1
            pthread_cond_broadcast(&rung)
            pthread_mutex_unlock(&mutex)
        }

        /// The rings so far.
        var count: Int {
            pthread_mutex_lock(&mutex)
            defer { pthread_mutex_unlock(&mutex) }
            return rings
        }

        /// Waits until it has rung more than `seen` times.
        func wait(after seen: Int) {
            pthread_mutex_lock(&mutex)
            while rings == seen { pthread_cond_wait(&rung, &mutex) }
            pthread_mutex_unlock(&mutex)
        }
    }
}

/// On the reading thread of a sharded run: the shards' lines (`ShardLines`) numbered as one
/// table numbers its connections, by first frame, and written into the report in that order as
/// the run goes — each once every lower ID is in, the others waiting as with one table (in
/// memory up to a budget, past it in a file: `Spill`). A connection is numbered once every shard
/// has come past its first frame (the least progress of all): no shard can still open one before it.
public final class ShardedLines: @unchecked Sendable {
    // (Unchecked: the reading thread alone uses it.)
    private let shards: [ShardLines]
    private let report: ReportStream
    private let bell = ShardLines.Bell()
    /// Each shard's lines waiting, by its own IDs.
    @exclusivity(unchecked) private var waiting: [Spill]
    /// Each shard's first frames not numbered yet, from `heads[k]` on, and its progress.
    @exclusivity(unchecked) private var frames: [[UInt64]]
    @exclusivity(unchecked) private var heads: [Int]
    @exclusivity(unchecked) private var progress: [UInt64]
    /// The shards that handed their last over.
    @exclusivity(unchecked) private var ended: [Bool]
    /// The parcels of a shard being taken in (given back once written out).
    @exclusivity(unchecked) private var parcels: [ShardLines.Parcel] = []
    /// The shard of each numbered connection not in the report yet, in ID order, from `ownersHead`.
    @exclusivity(unchecked) private var owners: [UInt8] = []
    @exclusivity(unchecked) private var ownersHead = 0
    /// Each shard's next connection to go into the report, by its own ID.
    @exclusivity(unchecked) private var nextLocal: [Int]
    /// The lines in the report so far: the capture's ID of the next.
    @exclusivity(unchecked) private(set) var written = 0
    @exclusivity(unchecked) private var failed = false

    /// Lines waiting in memory, all shards' together, as one table's; past it they wait in the
    /// files. Most of a capture's lines wait (connections finish in an order of their own: 46,609
    /// of varint-50k's 50,000 at `-t 2`). 256 KiB kept 7,326 of them in memory, and the round
    /// trip of the others through the files cost the reading thread 20 ms of its 0.17 s at `-t 2`
    /// (30 ms at `-t 3`, where it bounds the run); this, 0.1 to 0.6 MiB more at the peak.
    public static let memoryBudget = ConnectionListing.memoryBudget

    /// - Parameter memoryBudget: the bytes of lines kept in memory while they wait, shared out.
    public init(shards: [ShardLines], report: ReportStream, memoryBudget: Int = ShardedLines.memoryBudget) throws {
        precondition(shards.count <= 256, "at most 256 shards")
        self.shards = shards
        self.report = report
        for shard in shards { shard.bell = bell }
        waiting = []
        do {
            for _ in shards {
                var spill = try Spill(memoryBudget: memoryBudget / shards.count)
                spill.keepsIDOffsets = true
                waiting.append(spill)
            }
        } catch { throw ListingError(description: "\(error)") }
        frames = shards.map { _ in [] }
        heads = shards.map { _ in 0 }
        progress = shards.map { _ in 0 }
        nextLocal = shards.map { _ in 0 }
        ended = shards.map { _ in false }
    }

    deinit {
        for k in waiting.indices { waiting[k].release() }
    }

    /// Takes in what the shards handed over and writes the lines now due into the report.
    public func collect() {
        for (k, shard) in shards.enumerated() {
            shard.take(&parcels)
            defer { shard.giveBack(&parcels) }
            for p in parcels.indices {  // (in place: a parcel copied out retained its block and lists)
                frames[k].append(contentsOf: parcels[p].firstFrames)
                progress[k] = parcels[p].progress
                ended[k] = parcels[p].isLast
                number()
                guard let block = parcels[p].bytes else { continue }
                withExtendedLifetime(block) {
                    let bytes = block.bytes
                    parcels[p].lines.withUnsafeBufferPointer { lines in
                        for i in lines.indices {
                            let line = lines[i], end = i &+ 1 < lines.count ? lines[i &+ 1].start : bytes.count
                            take(UnsafeRawBufferPointer(rebasing: bytes[line.start..<end]), shard: k, id: line.id, idAt: line.idAt)
                        }
                    }
                }
            }
        }
    }

    /// Collects until every shard has handed its last over (on the reading thread, while the
    /// workers finish their connections: a run's end can finish thousands at once).
    public func collectUntilEveryShardEnds() {
        while true {
            let seen = bell.count
            collect()
            if !ended.contains(false) { return }
            bell.wait(after: seen)
        }
    }

    /// Numbers the connections every shard has come past the first frame of.
    private func number() {
        let frontier = progress.min() ?? 0
        // On the lists moved into locals: read through the class in the closure, each connection
        // cost a check of every array (varint-50k at `-t 2`).
        var heads: [Int] = [], owners: [UInt8] = []
        swap(&heads, &self.heads)
        swap(&owners, &self.owners)
        frames.withUnsafeBufferPointer { frames in
            heads.withUnsafeMutableBufferPointer { heads in
                while let k = ConnectionNumbering.earliest(frames.count, through: frontier, next: { heads[$0] < frames[$0].count ? frames[$0][heads[$0]] : nil }) {
                    owners.append(UInt8(truncatingIfNeeded: k))
                    heads[k] += 1
                }
            }
        }
        for k in frames.indices where heads[k] >= 4096 && heads[k] * 2 >= frames[k].count {
            frames[k].removeFirst(heads[k])
            heads[k] = 0
        }
        swap(&heads, &self.heads)
        swap(&owners, &self.owners)
        writeWaiting()
    }

    /// A shard's line: into the report if it is the next one, else to wait.
    private func take(_ line: UnsafeRawBufferPointer, shard k: Int, id: Int, idAt: Int) {
        guard ownersHead < owners.count, Int(owners[ownersHead]) == k, nextLocal[k] == id else {
            return waiting[k].append(line: line, id: id, idAt: idAt)
        }
        report.open()
        report.writer.encodedMember(line, replacingDigitsAt: idAt, count: decimalDigits(UInt64(id)), with: written)
        advance(k)
        writeWaiting()
    }

    /// The lines waiting that are due now, in ID order.
    private func writeWaiting() {
        while ownersHead < owners.count {
            let k = Int(owners[ownersHead])
            guard waiting[k].has(nextLocal[k]) else { break }
            report.open()
            if !waiting[k].copy(nextLocal[k], renumbered: written, to: &report.writer) { failed = true }
            advance(k)
        }
        if ownersHead >= 65_536 && ownersHead * 2 >= owners.count {
            owners.removeFirst(ownersHead)
            ownersHead = 0
        }
    }

    private func advance(_ k: Int) {
        ownersHead += 1
        nextLocal[k] += 1
        written += 1
    }

    /// At the end of the report's listing, after the last `collect` (every shard handed its last
    /// over): marks `w`, the report's writer, failed if a line could not be written or is missing.
    func finish(to w: inout JSONWriter) {
        if failed || ended.contains(false) || ownersHead < owners.count || heads.indices.contains(where: { heads[$0] < frames[$0].count }) { w.markFailed() }
    }
}
