import FramescopeCore

/// What a report's figures are computed from but do not show: the fine histograms behind every
/// distribution of the totals, TCP and response times, and the counts the warnings read. The
/// JSON carries them (`sketches`), so `framescope merge` can combine shards' reports into the
/// figures one run over the whole capture gives: percentiles are not mergeable, histograms are.
extension AnalysisReport {
    public struct Sketches: Sendable {
        /// Message sizes (bytes) and assembly latencies (µs) of every connection, per direction.
        var messageSize: PerDirection<QuantileHistogram>
        var assemblyLatency: PerDirection<QuantileHistogram>
        /// By type name, when one SPEC with a type field framed every dissected connection.
        var assemblyLatencyByType: PerDirection<[String: QuantileHistogram]>?
        /// Handshake round trips and data-to-ACK round trips (µs).
        var initialRTT: QuantileHistogram
        var ackRTT: PerDirection<QuantileHistogram>
        /// Response times (µs) by request type name.
        var responseTimes: [String: QuantileHistogram]
        /// `--mss`, and the segments it made; segments larger than their receiver's MSS.
        var recutMSS: Int
        var recutSegments: Int
        var segmentsOverMSS: Int
        /// Directions that gave up resynchronising on the recovery budget.
        var recoveryExhausted: Int
    }
}

extension AnalysisReport.Sketches {
    init(analyzer: Analyzer, tcp: AnalysisReport.TCPContext?, responseTimes: AnalysisReport.ResponseTimesReport?) {
        let context = analyzer.context
        messageSize = context.sizes
        assemblyLatency = context.latencies
        assemblyLatencyByType = analyzer.choice.onlySpec.flatMap { spec in
            spec.hasTypeField ? PerDirection { d in typeLatencyHistograms(context.latencyByType[d], spec: spec, d) } : nil
        }
        initialRTT = tcp?.initialRTTHistogram ?? QuantileHistogram(bits: 6)
        ackRTT = tcp?.ackRTTHistograms ?? PerDirection { _ in QuantileHistogram(bits: 6) }
        self.responseTimes = responseTimes?.histograms ?? [:]
        recutMSS = context.recutMSS
        let directions = analyzer.finished.directions
        recutSegments = directions.clientToServer.recutSegments + directions.serverToClient.recutSegments
        segmentsOverMSS = analyzer.finished.segmentsOverMSS
        recoveryExhausted = context.recoveryBudget.exhausted
    }

    /// Adds another report's (of the same `--mss`): the histograms merged, the counts summed.
    mutating func merge(_ other: Self) {
        for d in Direction.allCases {
            messageSize[d].merge(other.messageSize[d])
            assemblyLatency[d].merge(other.assemblyLatency[d])
            ackRTT[d].merge(other.ackRTT[d])
            if let theirs = other.assemblyLatencyByType?[d] {
                var mine = assemblyLatencyByType?[d] ?? [:]
                merge(theirs, into: &mine)
                if assemblyLatencyByType == nil { assemblyLatencyByType = PerDirection { _ in [:] } }
                assemblyLatencyByType![d] = mine
            }
        }
        initialRTT.merge(other.initialRTT)
        merge(other.responseTimes, into: &responseTimes)
        recutSegments += other.recutSegments
        segmentsOverMSS += other.segmentsOverMSS
        recoveryExhausted += other.recoveryExhausted
    }

    private func merge(_ theirs: [String: QuantileHistogram], into mine: inout [String: QuantileHistogram]) {
        for (name, h) in theirs { mine[name, default: QuantileHistogram(bits: h.bits)].merge(h) }
    }

    func write(to w: inout JSONWriter) {
        func perDirection(_ key: StaticString, _ h: PerDirection<QuantileHistogram>, _ w: inout JSONWriter) {
            w.key(key)
            w.object { w in
                w.key("clientToServer")
                Self.write(h.clientToServer, to: &w)
                w.key("serverToClient")
                Self.write(h.serverToClient, to: &w)
            }
        }
        func byName(_ histograms: [String: QuantileHistogram], _ w: inout JSONWriter) {
            w.object { w in
                for (name, h) in histograms.sorted(by: { $0.key < $1.key }) {
                    w.key(named: name)
                    Self.write(h, to: &w)
                }
            }
        }
        w.object { w in
            perDirection("ackRTT", ackRTT, &w)
            perDirection("assemblyLatency", assemblyLatency, &w)
            if let byType = assemblyLatencyByType {
                w.key("assemblyLatencyByType")
                w.object { w in
                    w.key("clientToServer")
                    byName(byType.clientToServer, &w)
                    w.key("serverToClient")
                    byName(byType.serverToClient, &w)
                }
            }
            w.key("initialRTT")
            Self.write(initialRTT, to: &w)
            perDirection("messageSize", messageSize, &w)
            w.field("recoveryExhausted", recoveryExhausted)
            w.field("recutMSS", recutMSS)
            w.field("recutSegments", recutSegments)
            w.key("responseTimes")
            byName(responseTimes, &w)
            w.field("segmentsOverMSS", segmentsOverMSS)
        }
    }

    /// `{"bits":6,"buckets":[[index,count],…],"max":…,"min":…,"zeros":…}` on one line.
    private static func write(_ h: QuantileHistogram, to w: inout JSONWriter) {
        let (zeros, buckets) = h.sketch
        w.compact { w in
            w.object { w in
                w.field("bits", h.bits)
                w.key("buckets")
                w.array { w in for b in buckets { w.pair(Int64(b.index), Int64(b.count)) } }
                w.field("max", h.count == 0 ? 0 : h.maximum)
                w.field("min", h.count == 0 ? 0 : h.minimum)
                w.field("zeros", zeros)
            }
        }
    }

    /// Read back from a report's `sketches`; its counts bounded as every count of a report is.
    init(_ f: ReportFields) throws {
        let v = f.value
        func histogram(_ v: JSONNode?, _ name: String) throws -> QuantileHistogram {
            guard let v, let bits = v["bits"]?.int, let zeros = v["zeros"]?.int, zeros <= ReportFields.largest, let minimum = v["min"]?.int,
                let maximum = v["max"]?.int, let pairs = v["buckets"]?.elements
            else { throw f.fail("sketches.\(name) is not a histogram") }
            let buckets = try pairs.map { pair -> (index: Int, count: Int) in
                guard let p = pair.elements, p.count == 2, let i = p[0].int, let n = p[1].int else { throw f.fail("sketches.\(name): a bucket is not [index, count]") }
                return (Int(i), Int(n))
            }
            guard let h = QuantileHistogram(bits: Int(bits), zeros: Int(zeros), buckets: buckets, minimum: minimum, maximum: maximum) else {
                throw f.fail("sketches.\(name) does not describe a histogram")
            }
            return h
        }
        func perDirection(_ name: String) throws -> PerDirection<QuantileHistogram> {
            try PerDirection { d in try histogram(v[name]?[d.jsonKey], "\(name).\(d.jsonKey)") }
        }
        func byName(_ v: JSONNode?, _ name: String) throws -> [String: QuantileHistogram] {
            guard let members = v?.members else { throw f.fail("sketches.\(name) is not an object") }
            var out: [String: QuantileHistogram] = [:]
            for (key, h) in members { out[key] = try histogram(h, "\(name).\(key)") }
            return out
        }
        messageSize = try perDirection("messageSize")
        assemblyLatency = try perDirection("assemblyLatency")
        ackRTT = try perDirection("ackRTT")
        if let byType = v["assemblyLatencyByType"] {
            assemblyLatencyByType = try PerDirection { d in try byName(byType[d.jsonKey], "assemblyLatencyByType.\(d.jsonKey)") }
        }
        initialRTT = try histogram(v["initialRTT"], "initialRTT")
        responseTimes = try byName(v["responseTimes"], "responseTimes")
        recutMSS = try f.int("recutMSS")
        recutSegments = try f.int("recutSegments")
        segmentsOverMSS = try f.int("segmentsOverMSS")
        recoveryExhausted = try f.int("recoveryExhausted")
    }
}

extension Direction {
    /// `clientToServer` or `serverToClient`, as the JSON names a direction.
    var jsonKey: String { self == .clientToServer ? "clientToServer" : "serverToClient" }
}
