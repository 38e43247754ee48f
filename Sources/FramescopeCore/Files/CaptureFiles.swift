#if canImport(Glibc)
import Glibc
#endif

/// The capture files being read, open for reading packet bytes back by their location
/// (`CaptureLocation`): a reassembler compares a retransmitted copy with the first one in the
/// file instead of keeping a copy of every direction's last bytes. The capture layer adopts the
/// descriptor of each input whose packets it locates, before it hands any of them on; the
/// reassemblers, on any thread, read with `pread` (no shared file position).
public final class CaptureFiles: @unchecked Sendable {
    private let descriptors: UnsafeMutablePointer<Int32>
    public let inputs: Int

    public init(inputs: Int) {
        self.inputs = inputs
        descriptors = .allocate(capacity: max(1, inputs))
        descriptors.initialize(repeating: -1, count: max(1, inputs))
    }

    deinit {
        for k in 0..<inputs where descriptors[k] >= 0 { close(descriptors[k]) }
        descriptors.deallocate()
    }

    /// Input `input`'s bytes are read from `descriptor` (closed with this object).
    public func adopt(_ descriptor: Int32, input: Int) {
        precondition(input >= 0 && input < inputs, "input \(input) of \(inputs)")
        if descriptors[input] >= 0 { close(descriptors[input]) }
        descriptors[input] = descriptor
    }

    /// Whether input `input`'s bytes can be read back.
    public func holds(input: Int) -> Bool { input >= 0 && input < inputs && descriptors[input] >= 0 }

    /// Fills `buffer` with the bytes at `location`; false when they cannot all be read.
    func read(_ location: CaptureLocation, into buffer: UnsafeMutableRawBufferPointer) -> Bool {
        guard location.isKnown, holds(input: location.input), let start = buffer.baseAddress else { return buffer.isEmpty }
        let descriptor = descriptors[location.input]
        var done = 0
        while done < buffer.count {
            let n = pread(descriptor, start + done, buffer.count - done, off_t(location.offset) + off_t(done))
            if n > 0 {
                done += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }

    /// Calls `body` with the bytes at `location`, `count` of them, in pieces of at most 4 KiB
    /// in order (each piece's offset from `location` first); stops when `body` returns false.
    /// False when the bytes cannot all be read.
    func forEachPiece(
        at location: CaptureLocation, count: Int, _ body: (Int, UnsafeRawBufferPointer) -> Bool
    ) -> Bool {
        withUnsafeTemporaryAllocation(byteCount: min(count, 4096), alignment: 16) { buffer in
            var done = 0
            while done < count {
                let piece = UnsafeMutableRawBufferPointer(rebasing: buffer.prefix(min(buffer.count, count - done)))
                guard read(location.advanced(by: done), into: piece) else { return false }
                guard body(done, UnsafeRawBufferPointer(piece)) else { return true }
                done += piece.count
            }
            return true
        }
    }
}
