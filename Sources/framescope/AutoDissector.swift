import FramescopeCapture
import FramescopeCore

/// Keeps the first 64 KiB of each direction's stream (up to 64 directions, until its first gap):
/// the samples `--dissector auto` infers the framing from.
struct SamplingSink: StreamSink {
    static let bytesPerDirection = 64 << 10
    static let directions = 64
    private(set) var samples: [Int: FramingInference.Sample] = [:]
    /// Server port of each sampled connection.
    private(set) var serverPorts: [Int: UInt16] = [:]
    /// Directions whose sample stopped early (full, or a gap): not known to be whole.
    private var cut: Set<Int> = []

    private func key(_ id: ConnectionID, _ d: Direction) -> Int { id.rawValue * 2 + d.rawValue }

    mutating func connectionOpened(_ connection: ConnectionInfo) {
        serverPorts[connection.id.rawValue] = connection.server.port
    }

    /// Samples grouped by their connection's server port.
    var byServerPort: [UInt16: [FramingInference.Sample]] {
        var groups: [UInt16: [FramingInference.Sample]] = [:]
        for (k, sample) in samples.sorted(by: { $0.key < $1.key }) {
            groups[serverPorts[k / 2] ?? 0, default: []].append(sample)
        }
        return groups
    }

    mutating func data(_ chunk: StreamChunk) {
        let k = key(chunk.connection, chunk.direction)
        guard !cut.contains(k) else { return }
        if samples[k] == nil {
            guard samples.count < Self.directions, chunk.capturedOffset == 0 else { return }
            samples[k] = FramingInference.Sample(bytes: [], segmentStarts: [], complete: false)
        }
        let room = Self.bytesPerDirection - samples[k]!.bytes.count
        samples[k]!.segmentStarts.append(samples[k]!.bytes.count)
        samples[k]!.bytes.append(contentsOf: chunk.bytes.prefix(room))
        if room <= chunk.bytes.count { cut.insert(k) }
    }

    mutating func gap(_ gap: StreamGap) { cut.insert(key(gap.connection, gap.direction)) }

    /// A direction that ended (FIN) within its sample is whole: its end must be a frame boundary.
    mutating func connectionClosed(_ summary: ConnectionSummary) {
        for d in Direction.allCases where summary[d].finSeen {
            let k = key(summary.info.id, d)
            if !cut.contains(k) && samples[k] != nil { samples[k]!.complete = true }
        }
    }
}

/// `--dissector auto`: a sampling pass over the first packets, then per server port the SPEC
/// that puts frame boundaries where the segments start (one capture may hold several protocols).
/// Ports whose streams fit no framing are left undissected, and said so.
func inferDissectors(files: [String], filter: PacketFilter?, options: ReassemblyOptions) throws -> [UInt16: DissectorSpec] {
    if files.contains("-") { throw Failure(message: "--dissector auto reads the capture twice: give a file, not standard input") }
    var table = FlowTable(sink: SamplingSink(), options: options)
    var reader = CaptureReader(paths: files, filter: filter, packetLimit: 400_000)
    reader.read { info, bytes in table.process(bytes, info: info) }
    table.finish()
    var chosen: [UInt16: DissectorSpec] = [:]
    for (port, samples) in table.sink.byServerPort.sorted(by: { $0.key < $1.key }) {
        let candidates = FramingInference.infer(samples)
        // The right framing puts boundaries at segment starts far more often than chance does;
        // merged writes and corrupt messages keep it well below 100%.
        guard let best = candidates.first, best.score >= 0.2 else {
            let best = candidates.first.map { "best \($0.spec) at \(percentText($0.score))" } ?? "too few segments to tell"
            writeError("framescope: --dissector auto: port \(port): no framing fits (\(best)); give --dissector \(port)=SPEC\n")
            continue
        }
        var line = "framescope: --dissector auto: port \(port): '\(best.spec)' (score \(percentText(best.score)) over \(samples.count) streams)"
        if candidates.count > 1 { line += "; runner-up '\(candidates[1].spec)' (\(percentText(candidates[1].score)))" }
        writeError(line + "\n")
        var spec = try DissectorSpec(parsing: best.spec)
        spec.name = "auto: \(best.spec)"
        chosen[port] = spec
    }
    guard !chosen.isEmpty else { throw Failure(message: "--dissector auto found no framing that fits; give --dissector SPEC") }
    return chosen
}

private func percentText(_ share: Double) -> String {
    "\(Double(Int((share * 1000).rounded())) / 10)%"
}
