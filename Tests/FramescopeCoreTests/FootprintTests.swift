import Testing

@testable import FramescopeCore

/// The fixed state of a tracked connection, before any buffer or histogram grows: the flow
/// table's record and activity entry, and the framing object of a dissected connection (two
/// direction analyzers). Ceilings at today's sizes, so that a field added to the per-connection
/// path is a decision, not an accident: 50,000 open connections multiply every byte.
@Suite struct FootprintTests {
    @Test func aConnectionsFixedStateStaysWithinItsBudget() {
        #expect(MemoryLayout<Connection<Analyzer.ConnectionState>>.stride <= 704)
        #expect(MemoryLayout<ConnectionActivity>.stride <= 16)
        #expect(MemoryLayout<DirectionAnalyzer>.stride <= 560)
        // The schema is shared by reference, not copied into every direction.
        #expect(MemoryLayout<BodyInspection>.stride <= 64)
    }
}
