import Foundation
import FramescopeCapture
import Testing

/// The frame index `split` writes beside each shard: what is written is read back, and an index
/// that was cut or scribbled on ends early instead of naming wrong frames.
@Suite struct FrameIndexTests {
    func path() -> String { NSTemporaryDirectory() + "framescope-index-\(UUID().uuidString).frames" }

    @Test func framesComeBackAsWritten() throws {
        var generator = SystemRandomNumberGenerator()
        var frames: [UInt64] = []
        var frame: UInt64 = 0
        for _ in 0..<100_000 {
            // Mostly neighbours, now and then a jump (a shard of a capture with billions of frames).
            frame += Int.random(in: 0..<100, using: &generator) == 0 ? UInt64.random(in: 1...(1 << 40), using: &generator) : UInt64.random(in: 1...20, using: &generator)
            frames.append(frame)
        }
        let file = path()
        defer { unlink(file) }
        let writer = try FrameIndexWriter(path: file)
        #expect(frames.allSatisfy { writer.append($0) })
        try writer.close()
        let reader = try #require(try FrameIndexReader.open(file))
        #expect(reader.count == UInt64(frames.count))
        var read: [UInt64] = []
        while let f = reader.next() { read.append(f) }
        #expect(read == frames)
        #expect(try FrameIndexReader.open(path()) == nil, "no index beside a capture is no error")
    }

    /// Every truncation and thousands of random byte flips: the reader returns strictly growing
    /// frames, never more than the header's count, and never traps.
    @Test func aDamagedIndexEndsEarlyWithoutTrapping() throws {
        let file = path()
        defer { unlink(file) }
        let writer = try FrameIndexWriter(path: file)
        for f in stride(from: UInt64(1), through: 3_000, by: 3) { _ = writer.append(f) }
        #expect(writer.append(1 << 50) && !writer.append(1 << 50), "numbers only grow")
        try writer.close()
        let good = try Data(contentsOf: URL(fileURLWithPath: file))
        var generator = SystemRandomNumberGenerator()
        var damaged: [Data] = (16..<good.count).map { good.prefix($0) }
        for _ in 0..<2_000 {
            var bytes = good
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                bytes[Int.random(in: 16..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            damaged.append(bytes)
        }
        for bytes in damaged {
            try bytes.write(to: URL(fileURLWithPath: file))
            let reader = try #require(try FrameIndexReader.open(file))
            var last: UInt64 = 0, n: UInt64 = 0
            while let f = reader.next() {
                #expect(f > last)
                last = f
                n += 1
            }
            #expect(n <= reader.count && n == reader.read)
        }
        try Data("FSFRAME".utf8).write(to: URL(fileURLWithPath: file))
        #expect(throws: CaptureError.self) { try FrameIndexReader.open(file) }
    }
}
