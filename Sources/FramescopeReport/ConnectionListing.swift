import FramescopeCore

#if canImport(Glibc)
import Glibc
#endif

/// The finished connections a report lists, kept in memory that does not grow with their
/// number: the `top` worst, and, when the JSON report lists every connection, each one as its
/// compact JSON line, written into the report as it finishes when the report is written as the
/// analysis runs (`ReportStream`) and every lower ID is there, else kept until they are: in
/// memory up to `memoryBudget` bytes of lines, past it in an unlinked temporary file, with an
/// 8-byte index entry either way. A shard of a sharded run hands its lines to the reading
/// thread instead (`ShardLines`), which writes them into the report under the capture's IDs.
/// `--connections-ndjson` gets the same line as each connection finishes.
/// Unchecked: fed by the analysis, then read by the report writer, never both at once.
public final class ConnectionListing: @unchecked Sendable {
    /// Which connections the JSON report lists (the human formats show the `top` worst).
    public enum Scope: String, CaseIterable, Sendable {
        case all, worst
        case nothing = "none"
    }

    public let scope: Scope
    public let top: Int
    private let protobuf: ProtobufCheck?
    /// The `top` worst so far, a min-heap by rank.
    private var worst: [(rank: Trouble, analysis: ConnectionAnalysis)] = []
    @exclusivity(unchecked) private var spill: Spill?
    /// The report the lines go into as they finish, and the lowest ID not in it yet.
    private let report: ReportStream?
    @exclusivity(unchecked) private var nextInReport = 0
    private var ndjson: JSONWriter?
    /// A shard's: where its lines go.
    private let shardLines: ShardLines?
    /// `spill != nil || shardLines != nil` and `ndjson != nil`, known without copying either (a
    /// copy of each per connection, with a retain and a release, cost 250 instructions).
    private let lists: Bool, writesNDJSON: Bool
    /// A combined listing's lines: the ones the shards handed over, written as the run went.
    private var sharded: ShardedLines?
    /// Length-framed directions with malformed headers or a message open at the end, the 8 of
    /// the lowest connection IDs: where a SPEC suggestion is sought.
    public private(set) var suggestionCandidates: [(analysis: ConnectionAnalysis, direction: Direction)] = []
    public static let suggestionLimit = 8
    /// Lines waiting in memory with one table. In the benchmark's 50,000 connections
    /// (varint-50k), up to 1.9 MB of lines wait at once, as the most connections are open (the
    /// peak of the run): 2 MiB keeps them all, the peak 0.7 MiB higher than with 512 KiB, which
    /// sent 29,794 of its 47,960 lines through the file.
    public static let memoryBudget = 2 << 20
    /// - Parameters:
    ///   - spillAll: keep every connection for a JSON report that lists them all.
    ///   - ndjsonFD: where each finished connection's line goes as it finishes.
    ///   - shardLines: a shard's listing, with `spillAll`: where its lines go instead.
    ///   - report: with `spillAll`, the report being written, which takes each line as soon as
    ///     every lower ID is in it.
    ///   - memoryBudget: the most bytes of lines kept in memory while they wait.
    public init(
        scope: Scope, top: Int, protobuf: ProtobufCheck?, spillAll: Bool, ndjsonFD: Int32? = nil, shardLines: ShardLines? = nil,
        report: ReportStream? = nil, memoryBudget: Int = ConnectionListing.memoryBudget
    ) throws {
        self.scope = scope
        self.top = top
        self.protobuf = protobuf
        self.report = spillAll ? report : nil
        self.shardLines = spillAll ? shardLines : nil
        if spillAll && shardLines == nil { spill = try Spill(memoryBudget: memoryBudget) }
        if let ndjsonFD { ndjson = JSONWriter(fd: ndjsonFD, layout: .lines) }
        lists = spillAll
        writesNDJSON = ndjsonFD != nil
    }

    deinit {
        spill?.release()
    }

    public func add(_ analysis: ConnectionAnalysis) {
        rank(analysis)
        noteSuggestionCandidates(analysis)
        if lists { list(analysis) }
        if writesNDJSON {
            analysis.writeJSON(to: &ndjson!, protobuf: protobuf)
            ndjson!.endLine()
        }
    }

    /// Into the report when every lower ID is in it (with the spilled lines that now follow in
    /// ID order), else into the spill to wait.
    private func list(_ analysis: ConnectionAnalysis) {
        if let shardLines { return shardLines.add(analysis, protobuf: protobuf) }
        guard let report, analysis.summary.info.id.rawValue == nextInReport else { return spill!.append(analysis, protobuf: protobuf) }
        report.open()
        report.writer.member { analysis.writeJSON(to: &$0, protobuf: protobuf) }
        nextInReport += 1
        guard let next = spill!.copy(from: nextInReport, to: &report.writer, throughMissing: false) else { return report.writer.markFailed() }
        nextInReport = next
    }

    /// The worst connections, worst first.
    public var worstFirst: [ConnectionAnalysis] {
        worst.sorted { $0.rank > $1.rank }.map(\.analysis)
    }

    /// Writes what is buffered for `--connections-ndjson`; false when a write failed.
    public func finishStream() -> Bool {
        guard writesNDJSON else { return true }
        ndjson!.flush()
        return !ndjson!.failed
    }

    /// Every connection's line not in the report yet, in ID order, as the members of the array
    /// being written.
    func writeAll(to w: inout JSONWriter) {
        if let sharded { return sharded.finish(to: &w) }
        spill?.mapForReading()
        if spill?.copy(from: nextInReport, to: &w, throughMissing: true) == nil { w.markFailed() }
    }

    /// The listings of workers that each saw a share of a capture's connections, as one: the
    /// worst and the suggestion candidates under the capture's IDs (`numbering`: worker `w` is
    /// its table `w`), and, for a JSON report listing them all, the lines the shards handed over
    /// (`sharded`).
    public static func combining(_ workers: [ConnectionListing], numbering: ConnectionNumbering, sharded: ShardedLines? = nil) throws -> ConnectionListing {
        let first = workers[0]
        let combined = try ConnectionListing(scope: first.scope, top: first.top, protobuf: first.protobuf, spillAll: false)
        for (w, worker) in workers.enumerated() {
            func renumbered(_ a: ConnectionAnalysis) -> ConnectionAnalysis {
                a.renumbered(ConnectionID(numbering.captureID(table: w, id: a.summary.info.id.rawValue)))
            }
            for kept in worker.worst { combined.rank(renumbered(kept.analysis)) }
            var seen = Set<ConnectionID>()
            for candidate in worker.suggestionCandidates where seen.insert(candidate.analysis.summary.info.id).inserted {
                combined.noteSuggestionCandidates(renumbered(candidate.analysis))
            }
        }
        combined.sharded = sharded
        return combined
    }

    /// Keeps the `top` worst in a min-heap: the least bad of them at the root, replaced when a
    /// worse one comes (O(log top) per connection; a SYN flood brings hundreds of thousands).
    private func rank(_ analysis: ConnectionAnalysis) {
        guard top > 0 else { return }
        let trouble = Trouble(analysis)
        if worst.count < top {
            worst.append((trouble, analysis))
            var i = worst.count - 1
            while i > 0, worst[i].rank < worst[(i - 1) / 2].rank {
                worst.swapAt(i, (i - 1) / 2)
                i = (i - 1) / 2
            }
        } else if trouble > worst[0].rank {
            worst[0] = (trouble, analysis)
            var i = 0
            while true {
                let (left, right) = (2 * i + 1, 2 * i + 2)
                var least = i
                if left < worst.count, worst[left].rank < worst[least].rank { least = left }
                if right < worst.count, worst[right].rank < worst[least].rank { least = right }
                if least == i { break }
                worst.swapAt(i, least)
                i = least
            }
        }
    }

    private func noteSuggestionCandidates(_ analysis: ConnectionAnalysis) {
        // Length fields only, checked first: most connections end here without touching their figures.
        guard analysis.isLengthFramed else { return }
        let troubled = Direction.allCases.filter(analysis.endedInTrouble)
        guard !troubled.isEmpty else { return }
        let id = analysis.summary.info.id
        if suggestionCandidates.count == Self.suggestionLimit, let last = suggestionCandidates.last, last.analysis.summary.info.id < id { return }
        for d in troubled {
            suggestionCandidates.append((analysis, d))
        }
        suggestionCandidates.sort { ($0.analysis.summary.info.id, $0.direction.rawValue) < ($1.analysis.summary.info.id, $1.direction.rawValue) }
        if suggestionCandidates.count > Self.suggestionLimit { suggestionCandidates.removeLast(suggestionCandidates.count - Self.suggestionLimit) }
    }
}

public struct ListingError: Error, CustomStringConvertible {
    public var description: String
}

/// How bad a connection is, for listing the worst: problems that desynchronise a reader
/// (malformed headers, messages damaged by gaps or cut at the end, boundaries not found), then
/// the messages a one-read-one-message reader loses, then partial and merged, then bytes; the
/// lower ID first among equals, so the list is the same however the input is split.
public struct Trouble: Comparable {
    public var problems: Int
    public var naiveLoss: Int
    var splitOrGlued: Int
    var bytes: Int64
    var id: ConnectionID

    public init(_ a: ConnectionAnalysis) {
        (problems, naiveLoss, splitOrGlued) = (0, 0, 0)
        bytes = a.summary[.clientToServer].bytes + a.summary[.serverToClient].bytes
        id = a.summary.info.id
        guard a.isDissected else { return }
        count(a.figures.clientToServer)
        count(a.figures.serverToClient)
    }

    private mutating func count(_ f: borrowing DirectionAnalysis) {
        problems += f.malformed + f.damagedByGaps + f.incompleteAtEnd + f.boundariesNotFound
        naiveLoss += f.naiveReaderLoss
        splitOrGlued += f.partialMessages + f.mergedSegments
    }

    public static func < (a: Trouble, b: Trouble) -> Bool {
        (a.problems, a.naiveLoss, a.splitOrGlued, a.bytes, b.id) < (b.problems, b.naiveLoss, b.splitOrGlued, b.bytes, a.id)
    }
}

/// Connection lines waiting: in memory (`WaitingLines`) while they fit its budget, else in an
/// unlinked temporary file, with where each one is: 8 bytes a connection, indexed by ID (IDs are
/// dense), so a million connections cost 8 MB and no sort.
struct Spill {
    let fd: Int32
    var writer: JSONWriter
    var memory: WaitingLines
    /// By connection ID: a `WaitingLines` entry for a line in `memory` (`readInMemory` once read),
    /// else the line's offset in the file << 24 and its length (0: no line; `longLines` holds the
    /// length of a line of 16 MiB or more).
    var index: [UInt64] = []
    var longLines: [Int: Int] = [:]
    static let lengthBits: UInt64 = 24
    static let lengthMask: UInt64 = (1 << lengthBits) - 1
    static let readInMemory = WaitingLines.flag

    init(memoryBudget: Int) throws {
        memory = WaitingLines(budget: memoryBudget)
        let folder = temporaryFolder()
        var template = Array((folder + "/framescope-connections-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw ListingError(description: "\(folder): cannot create a temporary file: \(String(cString: strerror(errno)))") }
        unlink(template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        self.fd = fd
        writer = JSONWriter(fd: fd, layout: .lines)
    }

    /// The file mapped for the last pass (`mapForReading`), and its size: lines are read where
    /// they lie. `pread`s into batches sorted by offset were half of copying 50,000 lines at
    /// `-t 2` (varint-50k: `fill` 23.8 M of 46.4 M instructions, the sort 10.7 M of it).
    private var mapped: UnsafeMutableRawPointer?
    private var mappedSize = 0
    /// Lines read from the map since its pages were last given back: every `adviceInterval`
    /// lines they are (`MADV_DONTNEED`), so the map adds at most that many pages to the resident
    /// set, however large the file (a million connections: 1.2 GB of lines).
    private var readSinceAdvice = 0
    static let adviceInterval = 256

    /// Maps the file for the last pass, after which no line is appended; lines are read by
    /// `pread` as before when it cannot be mapped.
    mutating func mapForReading() {
        writer.flush()
        let size = writer.position
        guard mapped == nil, !writer.failed, size > 0, let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else { return }
        (mapped, mappedSize) = (base, size)
    }

    /// Closes the file and frees the lines never read.
    mutating func release() {
        if let mapped { munmap(mapped, mappedSize) }
        close(fd)
        for entry in index where isInMemory(entry) && entry != Self.readInMemory { memory.discard(entry) }
        memory.close()
    }

    private func isInMemory(_ entry: UInt64) -> Bool { entry & WaitingLines.flag != 0 }

    mutating func append(_ analysis: ConnectionAnalysis, protobuf: ProtobufCheck?) {
        let start = writer.position
        var idAt = 0
        analysis.writeJSON(to: &writer, protobuf: protobuf, idAt: &idAt)
        let id = analysis.summary.info.id.rawValue
        if let line = writer.unflushed(since: start), let entry = memory.keep(line) {
            writer.takeBack(since: start)
            index(id, entry, idAt: idAt - start)
        } else {
            index(id, inFileFrom: start, idAt: idAt - start)
        }
    }

    /// Connection `id`'s line, encoded elsewhere with its ID at `idAt`.
    mutating func append(line: UnsafeRawBufferPointer, id: Int, idAt: Int) {
        if let entry = memory.keep(line) { return index(id, entry, idAt: idAt) }
        let start = writer.position
        writer.raw(line)
        index(id, inFileFrom: start, idAt: idAt)
    }

    /// Notes where connection `id`'s line went: into the file from `start` to the writer's position.
    private mutating func index(_ id: Int, inFileFrom start: Int, idAt: Int) {
        let length = writer.position - start
        if length >= Self.lengthMask { longLines[id] = length }
        index(id, UInt64(start) << Self.lengthBits | min(UInt64(length), Self.lengthMask), idAt: idAt)
    }

    private mutating func index(_ id: Int, _ entry: UInt64, idAt: Int) {
        Self.set(&index, id, entry, empty: 0)
        if keepsIDOffsets { Self.set(&idOffsets, id, UInt32(clamping: idAt), empty: 0) }
    }

    /// `list[i] = value`, the list grown with `empty` up to `i` first. Most IDs come next in
    /// line: one append.
    @inline(__always)
    private static func set<T>(_ list: inout [T], _ i: Int, _ value: T, empty: T) {
        if i > list.count { list.append(contentsOf: repeatElement(empty, count: i - list.count)) }
        if i == list.count { list.append(value) } else { list[i] = value }
    }

    /// Where each line's ID starts in it (4 bytes a connection): a shard's lines are copied
    /// with the capture's IDs (`ShardedLines`).
    var idOffsets: [UInt32] = []
    var keepsIDOffsets = false
    /// The lines of the IDs being served (`batch`, in ID order) and where each one is in it
    /// (`slots`); `cursor` is the next slot. Lines are asked for in increasing ID order.
    private var batch: [UInt8] = []
    private var slots: [(id: Int, start: Int, length: Int)] = []
    private var cursor = 0
    /// Where runs of several lines are read before each is copied to its slot.
    private var scratch: [UInt8] = []
    /// Lines in one batch (at least one line) and the most one read gathers; a run of lines
    /// goes on over a gap up to `gapLimit` (reading a few KiB costs less than a system call).
    /// While the analysis runs (`contiguous` reads), both are `drainBytes`: the buffers then
    /// count in the peak, next to the open connections (2 MiB of it with 3 MiB buffers).
    static let batchBytes = 2 << 20, runBytes = 1 << 20, drainBytes = 64 << 10, gapLimit = 8 << 10

    /// Where a line in the file is (a length of 16 MiB or more stands for the one in `longLines`).
    private func location(_ id: Int) -> (offset: Int, length: Int) {
        let entry = index[id]
        let length = entry & Self.lengthMask == Self.lengthMask ? longLines[id]! : Int(entry & Self.lengthMask)
        return (Int(entry >> Self.lengthBits), length)
    }

    /// Calls `body` with connection `id`'s line and where its ID starts in it (with
    /// `keepsIDOffsets`); false when the line cannot be read. IDs must come in increasing order;
    /// `contiguous`: the next asked for will be `id + 1`, and no line after a missing one.
    private mutating func read(_ id: Int, contiguous: Bool = false, _ body: (UnsafeRawBufferPointer, Int) -> Void) -> Bool {
        guard has(id) else { return false }
        let idAt = keepsIDOffsets ? Int(idOffsets[id]) : 0
        let entry = index[id]
        if isInMemory(entry) {
            guard entry != Self.readInMemory else { return false }  // (read once only)
            index[id] = Self.readInMemory
            memory.read(entry) { body($0, idAt) }
            return true
        }
        if let mapped {
            let (offset, length) = location(id)
            body(UnsafeRawBufferPointer(start: mapped + offset, count: length), idAt)
            readSinceAdvice += 1
            if readSinceAdvice == Self.adviceInterval {
                madvise(mapped, mappedSize, MADV_DONTNEED)
                readSinceAdvice = 0
            }
            return true
        }
        while cursor < slots.count && slots[cursor].id < id { cursor += 1 }
        if cursor == slots.count || slots[cursor].id != id {
            guard fill(from: id, contiguous: contiguous) else { return false }
        }
        let slot = slots[cursor]
        cursor += 1
        batch.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[slot.start..<slot.start + slot.length]), idAt) }
        return true
    }

    /// Reads the lines of `id` and the IDs after it, up to `batchBytes`, into `batch`: in file
    /// order, nearby lines in one `pread`. Connections finish in an order of their own (a
    /// long-lived one far after its neighbours in ID), so a window sliding over the file re-read
    /// megabytes for each late line (a million short connections: 80 GB read for a 1.2 GB
    /// listing); this reads each line once, and gaps of at most `gapLimit`. `contiguous`: up to
    /// the first ID without a line (one that may come later).
    private mutating func fill(from id: Int, contiguous: Bool) -> Bool {
        writer.flush()
        if writer.failed { return false }
        slots.removeAll(keepingCapacity: true)
        cursor = 0
        let (batchLimit, runLimit) = contiguous ? (Self.drainBytes, Self.drainBytes) : (Self.batchBytes, Self.runBytes)
        var total = 0, k = id
        while k < index.count {
            if isInMemory(index[k]) {  // read from memory when its turn comes
            } else if index[k] != 0 {
                let length = location(k).length
                if !slots.isEmpty && total + length > batchLimit { break }
                slots.append((k, total, length))
                total += length
            } else if contiguous {
                break
            }
            k += 1
        }
        if batch.count < total { batch = [UInt8](unsafeUninitializedCapacity: total) { _, count in count = total } }
        if scratch.count < runLimit { scratch = [UInt8](unsafeUninitializedCapacity: runLimit) { _, count in count = runLimit } }
        // Slots in file order: each slot's index entry with its position in place of the length,
        // sorted as numbers (a sort by a closure reading both entries was a fifth of the copy).
        var byOffset = slots.indices.map { index[slots[$0].id] & ~Self.lengthMask | UInt64($0) }
        byOffset.sort()
        var i = 0
        while i < byOffset.count {
            let first = location(slots[slot(byOffset[i])].id)
            var j = i, end = first.offset + first.length
            while j + 1 < byOffset.count {
                let next = location(slots[slot(byOffset[j + 1])].id)
                guard next.offset - end <= Self.gapLimit, next.offset + next.length - first.offset <= runLimit else { break }
                end = max(end, next.offset + next.length)
                j += 1
            }
            if i == j {  // one line: straight into its slot
                let slot = slots[slot(byOffset[i])]
                guard batch.withUnsafeMutableBytes({ Self.readFully(fd, into: $0.baseAddress! + slot.start, count: slot.length, at: first.offset) }) else { return false }
            } else {
                guard scratch.withUnsafeMutableBytes({ Self.readFully(fd, into: $0.baseAddress!, count: end - first.offset, at: first.offset) }) else { return false }
                for k in i...j {
                    let slot = slots[slot(byOffset[k])], at = location(slot.id).offset - first.offset
                    batch.withUnsafeMutableBytes { b in
                        scratch.withUnsafeBytes { s in (b.baseAddress! + slot.start).copyMemory(from: s.baseAddress! + at, byteCount: slot.length) }
                    }
                }
            }
            i = j + 1
        }
        return true
    }

    /// The slot a sort key of `fill` stands for.
    private func slot(_ key: UInt64) -> Int { Int(key & Self.lengthMask) }

    private static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int) -> Bool {
        var done = 0
        while done < count {
            let n = pread(fd, buffer + done, count - done, off_t(offset + done))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            done += n
        }
        return true
    }

    /// Connection `id`'s line into `w` with `renumbered` for its ID; false when it cannot be read.
    /// Lines are asked for in ID order, each after the one before it.
    mutating func copy(_ id: Int, renumbered: Int, to w: inout JSONWriter) -> Bool {
        read(id, contiguous: true) { bytes, idAt in w.encodedMember(bytes, replacingDigitsAt: idAt, count: decimalDigits(UInt64(id)), with: renumbered) }
    }

    func has(_ id: Int) -> Bool { id < index.count && index[id] != 0 }

    /// Copies the lines from ID `id` on into `w`, in ID order: all of them (`throughMissing`), or
    /// up to the first ID without one. Returns that ID (or the end), nil when a line cannot be read.
    mutating func copy(from id: Int, to w: inout JSONWriter, throughMissing: Bool) -> Int? {
        var id = id
        while id < index.count {
            if has(id) {
                guard read(id, contiguous: !throughMissing, { bytes, _ in w.encodedMember(bytes) }) else { return nil }
            } else if !throughMissing {
                break
            }
            id += 1
        }
        return id
    }
}

/// `$TMPDIR`, else /tmp.
private func temporaryFolder() -> String {
    if let value = getenv("TMPDIR"), value.pointee != 0 { return String(cString: value) }
    return "/tmp"
}
