/// Analyzers that each saw a share of a capture's connections (`analyze --threads`, every
/// connection wholly in one share) combined into what one analyzer over all of them holds.
/// Counts and histograms add up; evidence was kept by rank, not arrival, so the lowest of the
/// union is the lowest of all; connections are renumbered into the capture's IDs.
extension Analyzer {
    public static func combining(_ parts: [(analyzer: Analyzer, renumber: (ConnectionID) -> ConnectionID)]) -> Analyzer {
        var combined = parts[0].analyzer
        var evidence = EvidenceRecorder()
        evidence.absorb(combined.context.evidence, renumber: parts[0].renumber)
        combined.context.evidence = evidence
        for part in parts.dropFirst() { combined.absorb(part.analyzer, renumber: part.renumber) }
        return combined
    }

    private mutating func absorb(_ other: Analyzer, renumber: (ConnectionID) -> ConnectionID) {
        context.evidence.absorb(other.context.evidence, renumber: renumber)
        for d in Direction.allCases {
            context.sizes[d].merge(other.context.sizes[d])
            context.latencies[d].merge(other.context.latencies[d])
            context.latencyByType[d].absorb(other.context.latencyByType[d])
        }
        context.responseTimes.absorb(other.context.responseTimes)
        context.recoveryBudget.exhausted += other.context.recoveryBudget.exhausted
        finished.absorb(other.finished)
        if let theirs = other.asCaptured {
            for d in Direction.allCases { asCaptured?[d].merge(theirs[d]) }
        }
    }
}

extension FinishedConnections {
    mutating func absorb(_ other: FinishedConnections) {
        count += other.count
        dissected += other.dissected
        directions.clientToServer.mergeCounts(other.directions.clientToServer)
        directions.serverToClient.mergeCounts(other.directions.serverToClient)
        segmentsOverMSS += other.segmentsOverMSS
        undissectedConnectionBytes += other.undissectedConnectionBytes
        if let first = other.firstSeen { firstSeen = min(firstSeen ?? first, first) }
        if let last = other.lastSeen { lastSeen = max(lastSeen ?? last, last) }
    }
}

extension ReassemblyContext {
    /// Another table's counters and TCP figures added to these. Limits were shared out among
    /// the tables (each had its part), so what they counted adds up.
    public mutating func absorb(_ other: ReassemblyContext) {
        absorbPeaks(other)
        conflictWindowBytes += other.conflictWindowBytes
        directionsWithoutConflictCheck += other.directionsWithoutConflictCheck
        globalLimitEvictions += other.globalLimitEvictions
        bufferLimitGaps += other.bufferLimitGaps
        lateBytes += other.lateBytes
        connectionLimitEvictions += other.connectionLimitEvictions
        closedLimitFinalized += other.closedLimitFinalized
        initialRTT.merge(other.initialRTT)
        for d in Direction.allCases {
            ackRTT[d].merge(other.ackRTT[d])
            duplicateAcks[d] += other.duplicateAcks[d]
            zeroWindows[d] += other.zeroWindows[d]
            windowFull[d] += other.windowFull[d]
            gapBytes[d] += other.gapBytes[d]
            outOfOrder[d] += other.outOfOrder[d]
            retransmissions[d] += other.retransmissions[d]
        }
    }
}

extension ConnectionAnalysis {
    /// The same connection under another ID (a worker's, renumbered into the capture's).
    public func renumbered(_ id: ConnectionID) -> ConnectionAnalysis {
        var summary = summary
        summary.info.id = id
        return ConnectionAnalysis(summary: summary, plan: plan, directions: directions)
    }
}
