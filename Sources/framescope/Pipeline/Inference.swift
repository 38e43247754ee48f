import ArgumentParser
import FramescopeCapture
import FramescopeCore
import FramescopeReport
import Synchronization

/// A sampling pass over the first packets, then per server port what inference says of the
/// framing (`--dissector auto`, `framescope infer`).
func inferFraming(input: InputOptions, limits: LimitOptions, minimumEvidence: Double) throws -> [FramingInference.PortInference] {
    let sampled = try sampleStreams(InferenceSampler(), input: input, limits: limits, packetLimit: input.count ?? 400_000)
    return FramingInference.choose(sampled.byServerPort, minimumEvidence: minimumEvidence)
}

/// `--dissector auto`: the SPEC inference chose per server port, each said on standard error
/// with its confidence; ports where nothing fits are said so and left undissected.
func inferDissectors(input: InputOptions, limits: LimitOptions, minimumEvidence: Double) throws -> (specs: [UInt16: DissectorSpec], ports: [FramingInference.PortInference]) {
    if input.files.contains("-") {
        writeError("framescope: --dissector auto reads the capture twice: give a file, not standard input (or run framescope infer on it)\n")
        throw ExitCode(64)
    }
    let ports = try inferFraming(input: input, limits: limits, minimumEvidence: minimumEvidence)
    var chosen: [UInt16: DissectorSpec] = [:]
    for port in ports {
        writeError("framescope: --dissector auto: " + InferenceTextFormatter.line(port) + "\n")
        guard let best = port.chosen else { continue }
        var spec = try DissectorSpec(parsing: best.spec)
        spec.name = "auto: \(best.spec)"
        chosen[port.port] = spec
    }
    return (chosen, ports)
}

/// A second pass over the files that keeps the first bytes of streams (for `auto`, and for the
/// SPECs next to a failing one), up to where the directions the sampler awaits are settled: the
/// pass for SPEC suggestions read the whole capture again, when the few directions it samples
/// may have ended at its start (conn-1m with a wrong SPEC: 10.5 → 8.5 s). With `--threads` past
/// 1, libpcap reads and decodes on a second thread, as for the analysis.
func sampleStreams(_ sampler: InferenceSampler, input: InputOptions, limits: LimitOptions, packetLimit: Int?) throws -> InferenceSampler {
    var table = FlowTable(sink: sampler, options: limits.reassembly)
    var reader = CaptureReader(paths: input.files, filter: try input.packetFilter(), packetLimit: packetLimit)
    // Set by the sampling, read by the reading thread: packets it reads past the moment change
    // no settled sample.
    let settled = Atomic<Bool>(false)
    reader.isDone = { settled.load(ordering: .relaxed) }
    if input.threads > 1 {
        reader.readDecodedConcurrently { info, packet in
            table.process(packet, info: info)
            if table.sink.isSettled { settled.store(true, ordering: .relaxed) }
        }
    } else {
        reader.read { info, bytes in
            table.process(bytes, info: info)
            if table.sink.isSettled { settled.store(true, ordering: .relaxed) }
        }
    }
    table.finish()
    return table.sink
}
