import FramescopeCore
import FramescopeSynthetic
import Testing

@testable import FramescopeCapture

/// A batch of decoded packets, as the reading thread hands them over: each decoding's payload
/// lies in the batch's own copy (libpcap reuses its buffer for the next packet), and the
/// decodings come out in order with the packets' capture information.
struct PacketBatchTests {
    @Test func decodedPayloadsPointIntoTheBatchsCopy() throws {
        let builder = PacketBuilder()
        let batch = PacketBatch()
        var sent: [[UInt8]] = []
        for k in 0..<300 {
            let payload = (0..<(k % 40)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ k) }
            sent.append(payload)
            var packet = builder.tcp(from: Endpoint("10.0.0.\(k % 200 + 1):\(1000 + k)")!, to: Endpoint("10.9.9.9:80")!, sequence: UInt32(k), flags: [.ack], payload: payload)
            let info = CaptureInfo(frame: UInt64(k + 1), timestamp: Timestamp(nanoseconds: Int64(k)), linkType: .ethernet, captureLength: packet.count, originalLength: packet.count)
            packet.withUnsafeBytes { bytes in batch.append(info, bytes, decoded: PacketDecoder.decode(bytes, linkType: .ethernet)) }
            // What libpcap does to its buffer once the next packet is read.
            for i in packet.indices { packet[i] = 0xEE }
            if k == 150 { batch.appendSweep(at: Timestamp(nanoseconds: 150)) }
        }
        var seen: [(frame: UInt64, payload: [UInt8], port: UInt16)] = []
        batch.forEachDecoded { info, packet in
            guard info.frame != 0 else { return }  // the sweep
            guard case .tcp(let segment) = packet else {
                Issue.record("frame \(info.frame) did not decode")
                return
            }
            seen.append((info.frame, Array(segment.payload), segment.source.port))
        }
        #expect(seen.map(\.frame) == (1...300).map { UInt64($0) })
        #expect(seen.map(\.payload) == sent)
        #expect(seen.map(\.port) == (0..<300).map { UInt16(1000 + $0) })
    }
}
