import FramescopeCapture
import FramescopeCore
import FramescopeReport

/// The listing of finished connections built on a thread of its own, for the one-table
/// analysis with `--threads 2`: there the reading thread waits on the analysis most of the
/// time, and writing a JSON line per connection was a third of the analysis thread's work on
/// 50,000 connections. Connections reach it in batches in the order they finished, so the
/// listing (its lines, the worst, the suggestion candidates) is the one a single thread makes.
final class ListingThread: @unchecked Sendable {
    private let listing: ConnectionListing
    /// Four batches of 128 in circulation: a slow listing holds up the analysis, never grows.
    private let channel = BatchChannel<FinishedBatch>(batches: 4)
    private var filling: FinishedBatch?
    private var worker: Worker?

    init(_ listing: ConnectionListing) {
        self.listing = listing
        let channel = channel
        worker = Worker {
            while let batch = channel.takeFull() {
                for analysis in batch.analyses { listing.add(analysis) }
                channel.putEmpty(batch)
            }
        }
    }

    /// Hands a finished connection over (on the analysis thread).
    func add(_ analysis: ConnectionAnalysis) {
        let batch = filling ?? channel.takeEmpty()
        batch.analyses.append(analysis)
        if batch.analyses.count == FinishedBatch.capacity {
            channel.putFull(batch)
            filling = nil
        } else {
            filling = batch
        }
    }

    /// Waits until every connection handed over is listed; the listing is complete after it.
    func finish() {
        guard let worker else { return }
        if let filling { channel.putFull(filling) }
        filling = nil
        channel.finish()
        worker.join()
        self.worker = nil
    }
}

/// Finished connections on their way to the listing.
private final class FinishedBatch: Batch, @unchecked Sendable {
    static let capacity = 128
    var analyses: [ConnectionAnalysis] = []

    init() { analyses.reserveCapacity(Self.capacity) }

    func reset() { analyses.removeAll(keepingCapacity: true) }
}
