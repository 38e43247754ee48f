import Testing

@testable import FramescopeCore

/// Workers' connections numbered as one table numbers them (by first frame), from first
/// frames kept as varint differences.
@Suite struct ConnectionNumberingTests {
    @Test func aFrameSequenceGivesBackWhatWasAppended() {
        var random = SystemRandomNumberGenerator()
        // Mostly small steps up; steps down (several files) and the extremes too.
        var frames: [UInt64] = [0, 1, 1, 0, .max, 0, 1 << 63, (1 << 63) - 1, 5]
        var frame: UInt64 = 5
        for _ in 0..<5_000 {
            frame = Int.random(in: 0..<20, using: &random) == 0 ? UInt64.random(in: 0...UInt64.max, using: &random) : frame &+ UInt64.random(in: 0...300, using: &random)
            frames.append(frame)
        }
        var sequence = FrameSequence()
        for f in frames { sequence.append(f) }
        #expect(Array(sequence) == frames)
        #expect(sequence.count == frames.count)
    }

    /// Read as it grows (a shard hands its new first frames over after each batch): each read
    /// gives what was appended since the one before, none when nothing was.
    @Test func aGrowingFrameSequenceIsReadOnceInPieces() {
        var random = SystemRandomNumberGenerator()
        var sequence = FrameSequence(), cursor = FrameSequence.Cursor()
        var appended: [UInt64] = [], read: [UInt64] = []
        var frame: UInt64 = 0
        for _ in 0..<300 {
            for _ in 0..<Int.random(in: 0..<12, using: &random) {
                frame = Int.random(in: 0..<30, using: &random) == 0 ? UInt64.random(in: 0...UInt64.max, using: &random) : frame &+ UInt64.random(in: 1...500, using: &random)
                sequence.append(frame)
                appended.append(frame)
            }
            var piece: [UInt64] = []
            sequence.appended(since: &cursor, into: &piece)
            read += piece
            #expect(read == appended)
        }
    }

    @Test func captureIDsAreTheTablesMergedByFirstFrame() {
        var random = SystemRandomNumberGenerator()
        for tables in [1, 2, 3, 7] {
            // The capture's connections opening at increasing frames, each dealt to a table.
            var owner: [Int] = [], perTable = [[UInt64]](repeating: [], count: tables)
            var frame: UInt64 = 0
            for _ in 0..<(200 * tables + Int.random(in: 0..<100, using: &random)) {
                frame += UInt64.random(in: 1...40, using: &random)
                let k = Int.random(in: 0..<tables, using: &random)
                owner.append(k)
                perTable[k].append(frame)
            }
            let numbering = ConnectionNumbering(firstFrames: perTable.map { frames in
                var s = FrameSequence()
                for f in frames { s.append(f) }
                return s
            })
            #expect(numbering.owners.map(Int.init) == owner)
            for k in 0..<tables {
                let expected = owner.indices.filter { owner[$0] == k }
                #expect(perTable[k].indices.map { numbering.captureID(table: k, id: $0) } == expected)
            }
        }
    }
}
