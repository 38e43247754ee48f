import FramescopeCore

#if canImport(Glibc)
import Glibc
#endif

/// Packets copied out of libpcap's buffer into one block, so another thread can process them.
/// Raw fixed-size storage: no array growth or exclusivity checks per packet.
final class PacketBatch: Batch, @unchecked Sendable {
    /// 64 KiB: sixteen thousand hand-overs a gigabyte cost nothing measurable, and the batches
    /// in circulation hold little RSS (50,000 flows at `-t 2`: peak 81.8 → 78.1 MiB going from
    /// 1 MiB to 256 KiB, 65,176–65,484 → 64,424–64,828 KiB from 256 to 128 KiB, and 64,460 KiB
    /// with eight of 64 KiB where eight of 128 KiB were 65,728).
    static let capacity = 1 << 16
    static let maxPackets = 8_192
    /// A batch of decoded packets fills at fewer: a decoded packet is 100 bytes more (at 8,192,
    /// four batches of small packets had 1.5 MiB more resident; 50,000 flows at `-t 2`).
    static let maxDecodedPackets = 512

    /// Batches in circulation between the reading thread and each of `consumers` threads: eight
    /// for one, 512 KiB, fewer each for more. Either thread stalls now and then (the host, the
    /// kernel's reads, a run of packets of the reader's own share): with three of 128 KiB the
    /// reader waited 0.05–0.17 s for an empty batch and the worker 0.06–0.22 s for a full one
    /// in 0.7–0.9 s runs of 1 GB at `-t 2`; with eight of 64 KiB the reader waited 0.01–0.04 s
    /// (best of nine, random bodies: 0.68 s with three of 128 KiB and 16 groups of 64 on the
    /// reader, 0.57 s with eight of 64 KiB and 12).
    static func inFlight(consumers: Int) -> Int { max(3, 8 / max(1, consumers)) }
    /// Room for one more packet of the largest snaplen after `capacity` is reached.
    private let bytes = UnsafeMutableRawPointer.allocate(byteCount: capacity + 262_144, alignment: 16)
    private let packets = UnsafeMutablePointer<(info: CaptureInfo, offset: Int)>.allocate(capacity: maxPackets)
    private var used = 0
    private(set) var count = 0
    /// Each packet decoded, when appended with its decoding (on the producing thread; the
    /// payload points into this batch's copy).
    private var decoded: UnsafeMutablePointer<DecodedPacket>?
    /// The frame the reader had read when it handed the batch over (`readSharded`).
    var handedAt: UInt64 = 0
    /// A cache line after the fields, so that the next object malloc places shares none with
    /// them: the reader writes the batch it fills and the worker reads the one it drains, every
    /// packet. (With the reader's retain and release of its batch at every packet, now gone,
    /// `swift_release` had a tenth of the reader's samples at `-t 2`.)
    private let guardBand: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)

    init() {}

    deinit {
        bytes.deallocate()
        packets.deallocate()
        decoded?.deallocate()
    }

    var isFull: Bool { used >= Self.capacity || count == (decoded == nil ? Self.maxPackets : Self.maxDecodedPackets) }

    func append(_ info: CaptureInfo, _ data: UnsafeRawBufferPointer) {
        let length = min(data.count, 262_144)
        (packets + count).initialize(to: (info, used))
        if length > 0 { (bytes + used).copyMemory(from: data.baseAddress!, byteCount: length) }
        used += length
        count += 1
    }

    /// Appends a packet and its decoding (`packet`, made from `data`: its payload is moved to
    /// the copy).
    func append(_ info: CaptureInfo, _ data: UnsafeRawBufferPointer, decoded packet: DecodedPacket) {
        let start = used
        append(info, data)
        if decoded == nil { decoded = .allocate(capacity: Self.maxDecodedPackets) }
        var packet = packet
        if case .tcp(var segment) = packet, let from = data.baseAddress, let payload = segment.payload.baseAddress {
            let offset = payload - from
            if offset + segment.payload.count <= used - start {
                segment.payload = UnsafeRawBufferPointer(start: bytes + start + offset, count: segment.payload.count)
                packet = .tcp(segment)
            } else {  // (past what was copied: none of libpcap's snaplens reaches that far)
                packet = PacketDecoder.decode(UnsafeRawBufferPointer(start: bytes + start, count: used - start), info: info)
            }
        }
        (decoded! + count - 1).initialize(to: packet)
    }

    func reset() {
        used = 0
        count = 0
    }

    /// A sweep between packets (`readSharded`): an entry of no bytes with frame 0, which no
    /// packet has (frames count from 1).
    /// (Sharded reads are decoded: it has a decoded entry too, never read.)
    func appendSweep(at time: Timestamp) {
        let info = CaptureInfo(frame: 0, timestamp: time, linkType: .ethernet, captureLength: 0, originalLength: 0)
        append(info, UnsafeRawBufferPointer(start: nil, count: 0), decoded: .skipped(.truncatedLinkHeader))
    }

    /// Calls `body` for each packet appended with its decoding, in order.
    func forEachDecoded(_ body: (CaptureInfo, DecodedPacket) -> Void) {
        guard let decoded else { return }
        let (packets, count) = (packets, count)  // (not reloaded from the object after each call)
        for i in 0..<count { body(packets[i].info, decoded[i]) }
    }

    /// Calls `body` for each packet, in order.
    func forEach(_ body: (CaptureInfo, UnsafeRawBufferPointer) -> Void) {
        for i in 0..<count {
            let start = packets[i].offset
            let end = i + 1 < count ? packets[i + 1].offset : used
            body(packets[i].info, UnsafeRawBufferPointer(start: bytes + start, count: end - start))
        }
    }
}

/// Something a producer thread fills and a consumer thread drains.
public protocol Batch: AnyObject {
    init()
    func reset()
}

/// A hand-over of batches between a producing and a consuming thread, with at most `batches`
/// in circulation (memory stays bounded). Batches are made as they are first needed, so a quiet
/// live capture holds one, not its whole queue.
public final class BatchChannel<Item: Batch>: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var changed = pthread_cond_t()
    private var full: [Item] = []
    private var empty: [Item] = []
    private var made = 0
    private let limit: Int
    private var finished = false

    public init(batches: Int) {
        limit = max(1, batches)
        pthread_mutex_init(&mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(&changed, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(&mutex)
        pthread_cond_destroy(&changed)
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return body()
    }

    /// An empty batch, made if fewer than `batches` exist; nil when all are in use.
    private func emptyOrNew() -> Item? {
        if let batch = empty.popLast() { return batch }
        guard made < limit else { return nil }
        made += 1
        return Item()
    }

    /// Producer side: an empty batch to fill (waits while all are in use).
    public func takeEmpty() -> Item {
        locked {
            while true {
                if let batch = emptyOrNew() { return batch }
                pthread_cond_wait(&changed, &mutex)
            }
        }
    }

    /// Producer side, never waiting: nil when every batch is full of packets not yet taken.
    public func tryTakeEmpty() -> Item? { locked { emptyOrNew() } }

    public func putFull(_ batch: Item) {
        locked {
            full.append(batch)
            pthread_cond_broadcast(&changed)
        }
    }

    public func finish() {
        locked {
            finished = true
            pthread_cond_broadcast(&changed)
        }
    }

    /// Consumer side: the next filled batch, or nil once the producer finished and all are drained.
    public func takeFull() -> Item? {
        locked {
            while full.isEmpty && !finished { pthread_cond_wait(&changed, &mutex) }
            return full.isEmpty ? nil : full.removeFirst()
        }
    }

    public enum Taken {
        case batch(Item)
        case timeout
        case finished
    }

    /// Consumer side: the next filled batch, waiting at most `seconds` for one.
    public func takeFull(waitingAtMost seconds: Double) -> Taken {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nanoseconds = Int(now.tv_nsec) + Int(max(0, seconds) * 1e9)
        var deadline = timespec(tv_sec: now.tv_sec + nanoseconds / 1_000_000_000, tv_nsec: nanoseconds % 1_000_000_000)
        return locked {
            while full.isEmpty && !finished {
                if pthread_cond_timedwait(&changed, &mutex, &deadline) == ETIMEDOUT { break }
            }
            if !full.isEmpty { return .batch(full.removeFirst()) }
            return finished ? .finished : .timeout
        }
    }

    public func putEmpty(_ batch: Item) {
        batch.reset()
        locked {
            empty.append(batch)
            pthread_cond_broadcast(&changed)
        }
    }
}

/// Runs `body` on a new thread and returns a way to wait for it.
public final class Worker: @unchecked Sendable {
    private var thread = pthread_t()
    private let body: () -> Void

    public init(_ body: @escaping () -> Void) {
        self.body = body
        let context = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&thread, nil, { context in
            let worker = Unmanaged<Worker>.fromOpaque(context!).takeRetainedValue()
            worker.body()
            return nil
        }, context)
    }

    public func join() { pthread_join(thread, nil) }
}

extension CaptureReader {
    /// Like `read`, but libpcap reads on a second thread while `body` runs on this one; packets
    /// arrive in the same order, so the results are identical.
    public mutating func readConcurrently(_ body: (CaptureInfo, UnsafeRawBufferPointer) -> Void) {
        readConcurrently(filling: { $0.append($1, $2) }, draining: { $0.forEach(body) })
    }

    /// Like `readConcurrently`, but the reading thread decodes each packet too (it has time to
    /// spare: the libpcap loop is about half of what the flow table behind it costs).
    public mutating func readDecodedConcurrently(_ body: (CaptureInfo, DecodedPacket) -> Void) {
        readConcurrently(filling: { $0.append($1, $2, decoded: PacketDecoder.decode($2, info: $1)) }, draining: { $0.forEachDecoded(body) })
    }

    private mutating func readConcurrently(
        filling fill: @escaping @Sendable (PacketBatch, CaptureInfo, UnsafeRawBufferPointer) -> Void, draining drain: (PacketBatch) -> Void
    ) {
        // (Two in circulation: 1 GB at `-t 2` 0.50 → 0.63 s best of seven, in an earlier session.)
        let channel = BatchChannel<PacketBatch>(batches: PacketBatch.inFlight(consumers: 1))
        let box = ReaderBox(self)
        let worker = Worker {
            var batch = channel.takeEmpty()
            box.reader.read { info, data in
                fill(batch, info, data)
                if batch.isFull {
                    channel.putFull(batch)
                    batch = channel.takeEmpty()
                }
            }
            if batch.count == 0 { channel.putEmpty(batch) } else { channel.putFull(batch) }
            channel.finish()
        }
        while let batch = channel.takeFull() {
            drain(batch)
            channel.putEmpty(batch)
        }
        worker.join()
        self = box.reader
    }
}

/// Moves the reader to the reading thread and back after the join.
private final class ReaderBox: @unchecked Sendable {
    var reader: CaptureReader
    init(_ reader: CaptureReader) { self.reader = reader }
}
