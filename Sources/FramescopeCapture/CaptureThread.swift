import FramescopeCore

#if canImport(Glibc)
import Glibc
#endif

/// libpcap drained on a thread of its own: every packet is saved to the `--write` file and
/// copied into a batch there, so neither the analysis nor the view can hold up the kernel's
/// buffer. When the analysis falls so far behind that the whole queue is full, packets are
/// dropped before the analysis and counted (`analysisDrops`) — still saved, never a stall — and
/// so is the rest of their connections (`LoadShedder`).
public final class CaptureThread: @unchecked Sendable {
    /// When the capture ends by itself.
    public struct Stop: Sendable {
        public var afterPackets: Int?
        public var afterSeconds: Double?
        /// Polled between reads (at least every read timeout): a signal sets what it reads.
        public var requested: @Sendable () -> Bool

        public init(afterPackets: Int? = nil, afterSeconds: Double? = nil, requested: @escaping @Sendable () -> Bool) {
            self.afterPackets = afterPackets
            self.afterSeconds = afterSeconds
            self.requested = requested
        }
    }

    /// What the capture thread has done so far, published a few times a second.
    public struct Progress: Sendable {
        /// Packets read from libpcap (and saved).
        public var packets = 0
        /// Their lengths on the wire.
        public var bytes = 0
        /// Packets not analysed: the queue was full, or their connection was shed.
        public var analysisDrops = 0
        /// Connections left to the file alone from their first packet the queue had no room for.
        public var shedConnections = 0
        /// Monotonic seconds (`monotonicSeconds()`) when the last packet was read.
        public var lastPacketAt: Double?
        public var statistics: CaptureStatistics?
        /// Why the capture stopped early (a read or write error), if it did.
        public var failure: String?

        public init() {}
    }

    private let capture: LiveCapture
    private let stop: Stop
    private let channel: BatchChannel<PacketBatch>
    private var mutex = pthread_mutex_t()
    private var published = Progress()
    private var worker: Worker?

    /// Starts capturing; `queueBytes` bounds the packets held for the analysis.
    public init(_ capture: LiveCapture, queueBytes: Int, stop: Stop) {
        self.capture = capture
        self.stop = stop
        channel = BatchChannel(batches: max(2, queueBytes / PacketBatch.capacity))
        pthread_mutex_init(&mutex, nil)
        worker = Worker { [self] in run() }
    }

    deinit { pthread_mutex_destroy(&mutex) }

    public var progress: Progress {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return published
    }

    /// Analysis side: hands the packets of the next batch to `body`, in capture order, waiting at
    /// most `seconds` for one. False once the capture has ended and every packet was handed over.
    public func next(waitingAtMost seconds: Double, _ body: (CaptureInfo, UnsafeRawBufferPointer) -> Void) -> Bool {
        switch channel.takeFull(waitingAtMost: seconds) {
        case .batch(let batch):
            batch.forEach(body)
            channel.putEmpty(batch)
            return true
        case .timeout: return true
        case .finished: return false
        }
    }

    /// Waits for the capture thread to end (after `next` returned false) and closes the `--write`
    /// file; its final figures.
    public func join() -> Progress {
        worker?.join()
        worker = nil
        return progress
    }

    private func publish(_ local: Progress) {
        var local = local
        local.statistics = capture.statistics ?? local.statistics
        pthread_mutex_lock(&mutex)
        published = local
        pthread_mutex_unlock(&mutex)
    }

    private func run() {
        let start = monotonicSeconds()
        var local = Progress()
        var batch = channel.tryTakeEmpty()
        var lastHandOver = start
        var shedder = LoadShedder()

        func handOver() {
            if let full = batch, full.count > 0 {
                channel.putFull(full)
                batch = channel.tryTakeEmpty()
            }
        }
        func take(_ info: CaptureInfo, _ bytes: UnsafeRawBufferPointer) {
            local.packets += 1
            local.bytes += info.originalLength
            if shedder.isShed(bytes, linkType: info.linkType) {
                local.analysisDrops += 1
                return
            }
            if batch == nil { batch = channel.tryTakeEmpty() }
            guard let current = batch else {
                local.analysisDrops += 1
                shedder.shed(bytes, linkType: info.linkType)
                local.shedConnections = shedder.connections
                return
            }
            current.append(info, bytes)
            if current.isFull {
                channel.putFull(current)
                batch = channel.tryTakeEmpty()
            }
        }
        func counted() -> Bool { stop.afterPackets.map { local.packets >= $0 } ?? false }

        loop: while !stop.requested() && !counted() && !capture.savefileComplete {
            let result = capture.next(take)
            switch result {
            case .packet:
                // Under steady traffic the buffer is never empty: hand over at least every 50 ms.
                guard local.packets & 255 == 0 else { continue }
                let now = monotonicSeconds()
                local.lastPacketAt = now
                if now - lastHandOver >= 0.05 {
                    handOver()
                    publish(local)
                    lastHandOver = now
                }
                if let seconds = stop.afterSeconds, now - start >= seconds { break loop }
            case .timeout:
                let now = monotonicSeconds()
                if local.packets > published.packets { local.lastPacketAt = now }
                handOver()
                publish(local)
                lastHandOver = now
                if let seconds = stop.afterSeconds, now - start >= seconds { break loop }
                capture.waitForPackets()
            case .stopped:
                break loop
            case .failure(let message):
                local.failure = message
                break loop
            }
        }
        // What the kernel already holds arrived before the stop: read it too (for at most a
        // quarter of a second, in case traffic keeps coming), unless -c is reached.
        let drainUntil = monotonicSeconds() + 0.25
        while local.failure == nil && !counted() && !capture.savefileComplete && monotonicSeconds() < drainUntil {
            guard case .packet = capture.next(take) else { break }
        }
        do { try capture.finishWriting() } catch { local.failure = local.failure ?? "\(error)" }
        if local.packets > published.packets { local.lastPacketAt = monotonicSeconds() }
        handOver()
        if let last = batch { channel.putEmpty(last) }
        publish(local)
        channel.finish()
    }
}

/// Seconds on the monotonic clock.
public func monotonicSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}
