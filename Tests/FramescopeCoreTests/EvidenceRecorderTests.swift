@testable import FramescopeCore
import FramescopeSynthetic
import Testing

/// What the evidence recorder keeps does not depend on the order connections are processed in:
/// the events and examples of the lowest (connection ID, order within it), which is what makes
/// shards analyzed apart merge into one run's report.
@Suite struct EvidenceRecorderTests {
    /// Each connection's evidence, in the order its own packets produce it.
    struct Found {
        var connection: Int
        var event: AnalysisEvent?
        var example: SplitExample?
    }

    func evidence(connections: Int, perConnection: ClosedRange<Int>, seed: UInt64) -> [[Found]] {
        var rng = SplitMix64(seed: seed)
        return (0..<connections).map { c in
            (0..<Int(rng.next() % UInt64(perConnection.count)) + perConnection.lowerBound).map { k -> Found in
                let id = ConnectionID(c), direction: Direction = rng.next() & 1 == 0 ? .clientToServer : .serverToClient
                guard rng.next() % 3 == 0 else {
                    return Found(
                        connection: c,
                        event: AnalysisEvent(
                            kind: .malformed, reason: nil, connection: id, direction: direction, offset: Int64(k), frame: UInt64(k),
                            timestamp: Timestamp(nanoseconds: 0), bytes: [UInt8(k & 0xFF)], length: 1))
                }
                let cause = SplitCause.allCases[Int(rng.next() % UInt64(SplitCause.allCases.count))]
                return Found(
                    connection: c,
                    example: SplitExample(
                        kind: rng.next() & 1 == 0 ? .partial : .merged, connection: id, direction: direction, offset: Int64(k), length: 0,
                        firstFrame: UInt64(k), lastFrame: UInt64(k), count: 2, timestamp: Timestamp(nanoseconds: 0), cause: cause))
            }
        }
    }

    /// Interleaves the connections' evidence at random, each connection's in its own order.
    func interleaved(_ perConnection: [[Found]], seed: UInt64) -> [Found] {
        var rng = SplitMix64(seed: seed), next = [Int](repeating: 0, count: perConnection.count), out: [Found] = []
        var open = perConnection.indices.filter { !perConnection[$0].isEmpty }
        while !open.isEmpty {
            let k = Int(rng.next() % UInt64(open.count)), c = open[k]
            out.append(perConnection[c][next[c]])
            next[c] += 1
            if next[c] == perConnection[c].count { open.remove(at: k) }
        }
        return out
    }

    func record(_ found: [Found], limit: Int) -> EvidenceRecorder {
        var recorder = EvidenceRecorder(limit: limit)
        for f in found {
            if let e = f.event { recorder.add(e.connection, e) }
            if let x = f.example, recorder.wantsExample(x.kind, x.direction, x.cause, in: x.connection) { recorder.add(example: x) }
        }
        return recorder
    }

    @Test func eventsAndExamplesAreTheSameInAnyOrder() {
        let perConnection = evidence(connections: 300, perConnection: 0...60, seed: 7)
        let all = perConnection.flatMap { $0 }
        let limit = 2_000
        #expect(all.count(where: { $0.event != nil }) > 3 * limit, "past the cap")
        // What keeping the lowest means, written the slow way.
        let expectedEvents = Array(all.compactMap(\.event).prefix(limit))
        var expectedExamples: [SplitExample] = [], perKind: [String: Int] = [:], causes: Set<String> = []
        for x in all.compactMap(\.example) {
            let kind = "\(x.kind) \(x.direction)", cause = "\(kind) \(x.cause)"
            guard perKind[kind, default: 0] < EvidenceRecorder.examplesPerKind || !causes.contains(cause) else { continue }
            expectedExamples.append(x)
            perKind[kind, default: 0] += 1
            causes.insert(cause)
        }
        #expect(expectedExamples.count > 4 * EvidenceRecorder.examplesPerKind, "causes add examples")
        for seed in [1, 2, 3, 4] as [UInt64] {
            let recorder = record(interleaved(perConnection, seed: seed), limit: limit)
            #expect(recorder.events == expectedEvents)
            #expect(recorder.examples == expectedExamples)
            #expect(recorder.total == all.count(where: { $0.event != nil }))
        }
        // In connection order, found first is lowest: the same as keeping the first found.
        #expect(record(all, limit: limit).events == expectedEvents)
    }

    @Test func endpointsAreKeptOnlyForConnectionsTheEvidenceNames() {
        var recorder = EvidenceRecorder(limit: 2)
        func finished(_ c: Int) -> ConnectionInfo {
            ConnectionInfo(
                id: ConnectionID(c), client: Endpoint(address: IPAddress(ipv4: 1), port: UInt16(1000 + c)),
                server: Endpoint(address: IPAddress(ipv4: 2), port: 80), roleEvidence: .syn, firstFrame: UInt64(c), firstSeen: Timestamp(nanoseconds: 0))
        }
        func event(_ c: Int) -> AnalysisEvent {
            AnalysisEvent(
                kind: .gaveUp, reason: nil, connection: ConnectionID(c), direction: .clientToServer, offset: 0, frame: 0,
                timestamp: Timestamp(nanoseconds: 0), bytes: [], length: 0)
        }
        for c in [5, 6] { recorder.add(event(c)) }
        recorder.connectionFinished(finished(5))
        recorder.connectionFinished(finished(6))
        recorder.connectionFinished(finished(7))
        #expect(Set(recorder.endpoints.keys) == [ConnectionID(5), ConnectionID(6)])
        // Two events of lower connections evict both: their endpoints go with them.
        for c in [1, 2] { recorder.add(event(c)) }
        #expect(recorder.endpoints.isEmpty)
        #expect(recorder.events.map(\.connection) == [ConnectionID(1), ConnectionID(2)])
        recorder.add(event(9))  // past the cap and above the kept: counted only
        #expect(recorder.total == 5 && recorder.events.count == 2)
    }

    /// Connections whose evidence interleaves, each finishing after its last: the endpoints kept
    /// are exactly those of the connections the kept events and examples name, while events of
    /// lower connections evict higher ones' one by one (a connection is named while the highest
    /// kept event is still its).
    @Test func endpointsFollowTheKeptEvidenceWhileConnectionsInterleave() {
        let perConnection = evidence(connections: 200, perConnection: 0...30, seed: 5)
        let last = Dictionary(perConnection.indices.compactMap { c in perConnection[c].isEmpty ? nil : (c, perConnection[c].count) }) { a, _ in a }
        for seed in [1, 2, 3] as [UInt64] {
            var recorder = EvidenceRecorder(limit: 150), seen = [Int: Int]()
            for f in interleaved(perConnection, seed: seed) {
                if let e = f.event { recorder.add(e.connection, e) }
                if let x = f.example, recorder.wantsExample(x.kind, x.direction, x.cause, in: x.connection) { recorder.add(example: x) }
                seen[f.connection, default: 0] += 1
                if seen[f.connection] == last[f.connection] {
                    recorder.connectionFinished(
                        ConnectionInfo(
                            id: ConnectionID(f.connection), client: Endpoint(address: IPAddress(ipv4: 1), port: UInt16(1000 + f.connection)),
                            server: Endpoint(address: IPAddress(ipv4: 2), port: 80), roleEvidence: .syn, firstFrame: 0, firstSeen: Timestamp(nanoseconds: 0)))
                }
                let named = Set(recorder.events.map(\.connection) + recorder.examples.map(\.connection))
                #expect(Set(recorder.endpoints.keys).isSubset(of: named))
            }
            #expect(recorder.events.count == 150 && recorder.total > 1_000)
            #expect(Set(recorder.endpoints.keys) == Set(recorder.events.map(\.connection) + recorder.examples.map(\.connection)))
        }
    }

    /// Connections shared out among four recorders (each numbering its own from 0, as workers
    /// do) and taken in by a fifth: the events, examples and endpoints of one recorder over all.
    /// A connection with two examples, the first evicted while it is taken in and the second
    /// kept, keeps its endpoints.
    @Test func recordersOfSharesCombineIntoOne() {
        let perConnection = evidence(connections: 120, perConnection: 0...12, seed: 11)
        func info(_ c: Int) -> ConnectionInfo {
            ConnectionInfo(
                id: ConnectionID(c), client: Endpoint(address: IPAddress(ipv4: 1), port: UInt16(1000 + c)),
                server: Endpoint(address: IPAddress(ipv4: 2), port: 80), roleEvidence: .syn, firstFrame: UInt64(c), firstSeen: Timestamp(nanoseconds: 0))
        }
        func run(_ connections: [Int], local: (Int) -> Int) -> EvidenceRecorder {
            var recorder = EvidenceRecorder(limit: 300)
            for c in connections {
                for var f in perConnection[c] {
                    f.event?.connection = ConnectionID(local(c))
                    f.example?.connection = ConnectionID(local(c))
                    if let e = f.event { recorder.add(e.connection, e) }
                    if let x = f.example, recorder.wantsExample(x.kind, x.direction, x.cause, in: x.connection) { recorder.add(example: x) }
                }
                var finished = info(c)
                finished.id = ConnectionID(local(c))
                recorder.connectionFinished(finished)
            }
            return recorder
        }
        let whole = run(Array(perConnection.indices)) { $0 }
        for shares in [4, 3, 7] {
            var combined = EvidenceRecorder(limit: 300)
            for share in 0..<shares {
                let mine = perConnection.indices.filter { $0 % shares == share }
                let part = run(mine) { mine.firstIndex(of: $0)! }
                combined.absorb(part) { ConnectionID(mine[$0.rawValue]) }
            }
            #expect(combined.events == whole.events)
            #expect(combined.examples == whole.examples)
            #expect(combined.total == whole.total)
            let named = Set(combined.examples.map(\.connection) + combined.events.map(\.connection))
            #expect(Set(combined.endpoints.keys) == named && Set(whole.endpoints.keys) == named)
            for (id, ends) in combined.endpoints { #expect(ends.client == info(id.rawValue).client) }
        }
    }

    /// The case a corpus capture met with five threads: a worker's connection with two examples,
    /// the first evicted by a lower connection's while the worker is taken in, the second kept.
    @Test func aConnectionKeepsItsEndpointsWhenOneOfItsExamplesIsEvicted() {
        func example(_ c: Int, _ direction: Direction) -> SplitExample {
            SplitExample(
                kind: .merged, connection: ConnectionID(c), direction: direction, offset: 0, length: 0, firstFrame: 0, lastFrame: 0,
                count: 2, timestamp: Timestamp(nanoseconds: 0), cause: .writes)
        }
        func info(_ c: Int) -> ConnectionInfo {
            ConnectionInfo(
                id: ConnectionID(c), client: Endpoint(address: IPAddress(ipv4: 1), port: UInt16(1000 + c)),
                server: Endpoint(address: IPAddress(ipv4: 2), port: 80), roleEvidence: .syn, firstFrame: UInt64(c), firstSeen: Timestamp(nanoseconds: 0))
        }
        var first = EvidenceRecorder(), second = EvidenceRecorder(), combined = EvidenceRecorder()
        for c in [2, 5] {
            first.add(example: example(c, .clientToServer))
            first.connectionFinished(info(c))
        }
        second.add(example: example(6, .clientToServer))
        second.add(example: example(6, .serverToClient))
        second.connectionFinished(info(6))
        second.add(example: example(3, .clientToServer))
        second.connectionFinished(info(3))
        combined.absorb(first) { $0 }
        combined.absorb(second) { $0 }
        #expect(combined.examples.map(\.connection.rawValue).sorted() == [2, 3, 5, 6])
        #expect(combined.endpoints[ConnectionID(6)]?.client == info(6).client)
    }
}
