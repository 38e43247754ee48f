import Foundation
import FramescopeCore
@testable import FramescopeReport
import FramescopeSynthetic
import Testing

/// A JSON report written as the analysis runs takes each connection as soon as every lower ID is
/// in it, keeps the others waiting until then (in memory up to a budget, past it in the spill
/// file), and ends up byte for byte the listing written at the end through the file alone,
/// whatever order the connections finished in and whatever the budget.
@Suite struct ReportStreamTests {
    /// The sample's connections, analyzed once; `renumbered` copies make as many as a test needs.
    static let analyses: [ConnectionAnalysis] = {
        let analyzer = Analyzer(choice: DissectorChoice(byDefault: try! DissectorSpec(parsing: "varint")))
        let (table, _) = try! analyze([repositoryRoot.appendingPathComponent("samples/im-varint.pcap").path], sink: analyzer)
        return table.sink.connections
    }()

    /// A writer of the report's layout into a fresh unlinked file, and a way to read it back.
    final class Document {
        let fd: Int32

        init() throws {
            let path = NSTemporaryDirectory() + "framescope-report-\(UUID().uuidString)"
            fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0o600)
            try #require(fd >= 0)
            unlink(path)
        }

        deinit { close(fd) }

        var bytes: [UInt8] {
            let size = Int(lseek(fd, 0, SEEK_END))
            var bytes = [UInt8](repeating: 0, count: size)
            _ = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, size, 0) }
            return bytes
        }
    }

    /// Budgets for the waiting lines: none (all through the file), a few lines (the block full,
    /// compacted and the rest spilled), the default.
    static let budgets = [0, 8 << 10, ConnectionListing.memoryBudget]

    /// `count` connections finishing in `order` (IDs; `count` of them, or fewer when some never
    /// finish), for each budget: after each, the report holds exactly the IDs below the lowest one
    /// not finished, and at the end the document is the one a listing spilled whole writes.
    func check(_ order: [Int], count: Int) throws {
        for budget in Self.budgets { try check(order, count: count, budget: budget) }
    }

    func check(_ order: [Int], count: Int, budget: Int) throws {
        let source = Self.analyses.filter { $0.figures.clientToServer.messages > 0 }
        try #require(!source.isEmpty)
        let connections = (0..<count).map { source[$0 % source.count].renumbered(ConnectionID($0)) }

        let streamed = try Document(), stream = ReportStream(fd: streamed.fd)
        let listing = try ConnectionListing(scope: .all, top: 0, protobuf: nil, spillAll: true, report: stream, memoryBudget: budget)
        var finished = Set<Int>(), lowestWaiting = 0
        for id in order {
            let before = stream.writer.position
            listing.add(connections[id])
            finished.insert(id)
            let wasLowest = id == lowestWaiting
            while finished.contains(lowestWaiting) { lowestWaiting += 1 }
            // Into the report only when it was the lowest missing, with those waiting after it.
            #expect((stream.writer.position > before) == wasLowest, "connection \(id), budget \(budget)")
        }
        stream.open()
        listing.writeAll(to: &stream.writer)
        stream.writer.endArray()
        stream.writer.endObject()
        stream.writer.finish()

        #expect(!stream.writer.failed)
        let (got, wanted) = (streamed.bytes, try Self.listedWhole(order.map { connections[$0] }))
        let difference = (0..<max(got.count, wanted.count)).first { $0 >= got.count || $0 >= wanted.count || got[$0] != wanted[$0] }
        #expect(difference == nil, "budget \(budget): the documents differ from byte \(difference ?? 0) on")
        #expect(String(decoding: wanted, as: UTF8.self).hasPrefix("{\n  \"connections\" : [\n    {\"client\""))
    }

    /// The report's listing of `connections` (finishing in that order) written whole at the end,
    /// every line through the file.
    static func listedWhole(_ connections: [ConnectionAnalysis]) throws -> [UInt8] {
        let whole = try Document()
        let reference = try ConnectionListing(scope: .all, top: 0, protobuf: nil, spillAll: true, memoryBudget: 0)
        for connection in connections { reference.add(connection) }
        var w = JSONWriter(fd: whole.fd)
        AnalysisReport.writeOpening(capture: nil, to: &w)
        reference.writeAll(to: &w)
        w.endArray()
        w.endObject()
        w.finish()
        #expect(!w.failed)
        return whole.bytes
    }

    @Test func connectionsInIDOrderGoStraightIn() throws {
        try check(Array(0..<50), count: 50)
    }

    /// Each late one releases the run of those that waited on it (read back from the spill).
    @Test func aLateConnectionReleasesThoseThatWaited() throws {
        var order = Array(0..<400)
        order.swapAt(0, 150)  // 150 first, 0 in its place: 1…149 wait on 0
        order.swapAt(200, 390)
        try check(order, count: 400)
        var generator = SplitMix64(seed: 11)
        try check(Array(0..<1_000).shuffled(using: &generator), count: 1_000)
    }

    /// The first connection finishes last (a long-lived one): everything waits, 3,000 lines
    /// (more than one batch of reading back) go in at once.
    @Test func everythingWaitsOnAConnectionOpenToTheEnd() throws {
        try check(Array(1..<3_000) + [0], count: 3_000)
    }

    /// A connection that never finishes holds the ones after it back to the end of the run,
    /// where they are copied in order.
    @Test func aMissingConnectionLeavesTheRestToTheEnd() throws {
        try check(Array(0..<40) + Array(41..<300), count: 300)
    }
}
