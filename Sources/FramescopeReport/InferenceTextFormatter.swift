import FramescopeCore

/// `framescope infer` and the `--dissector auto` lines: per server port the framing chosen, how
/// sure, the runner-up, and why nothing was chosen when nothing was.
public enum InferenceTextFormatter {
    /// One line for a port.
    public static func line(_ p: FramingInference.PortInference) -> String {
        var line = "port \(p.port): "
        if let best = p.chosen {
            line += "'\(best.spec)' (\(p.verdict.rawValue), confidence \(percent(p.confidence)), \(bits(best.evidenceBits)) bits over \(counted(p.streams, "stream"))"
            if let runnerUp = p.candidates.dropFirst().first, let margin = p.marginBits {
                line += "; runner-up '\(runnerUp.spec)' \(bits(margin)) bits behind"
            }
            line += ")"
            if p.verdict != .confident { line += ": " + p.reason }
        } else {
            line += "no framing chosen: \(p.reason)"
            if let best = p.candidates.first { line += " (best '\(best.spec)')" }
            line += "; give --dissector \(p.port)=SPEC"
        }
        return line
    }

    public static func render(_ ports: [FramingInference.PortInference]) -> String {
        guard !ports.isEmpty else { return "no TCP stream with data: nothing to infer\n" }
        var out = ""
        for p in ports {
            out += "port \(p.port): \(counted(p.streams, "stream")) sampled (\(p.midStreamStreams) picked up mid-stream), \(counted(p.bytes, "byte"))\n"
            switch p.verdict {
            case .confident: out += "  framing: \(p.chosen!.spec)\n"
            case .ambiguous: out += "  framing: \(p.chosen!.spec)   AMBIGUOUS\n"
            case .weak: out += "  framing: \(p.chosen!.spec)   WEAK\n"
            case .none: out += "  framing: none chosen\n"
            }
            out += "  \(p.reason); confidence \(percent(p.confidence))"
            if let margin = p.marginBits { out += ", margin \(bits(margin)) bits" }
            out += "\n"
            var table = TextTable(
                [("#", .right), ("SPEC", .left), ("BITS", .right), ("HEADER", .right), ("ALIGN", .right), ("ENDS", .right), ("BODIES", .right),
                 ("FRAMED", .right), ("FRAMES", .right), ("MALFORMED", .right), ("SAME CUTS", .right)])
            for (i, c) in p.candidates.enumerated() {
                table.append([
                    "\(i + 1)", c.spec, bits(c.evidenceBits), bits(c.structureBits), bits(c.alignmentBits), bits(c.endBits), bits(c.bodyBits),
                    percent(c.coverage), "\(c.frames)", "\(c.malformedHeaders)", "\(c.equivalentSpecs)",
                ])
            }
            out += table.render().split(separator: "\n", omittingEmptySubsequences: false).map { $0.isEmpty ? "" : "  " + $0 }.joined(separator: "\n")
            for (i, c) in p.candidates.enumerated() where c.firstProblem != nil { out += "  #\(i + 1): \(c.firstProblem!)\n" }
            out += "\n"
        }
        return out
    }

    static func bits(_ value: Double) -> String { "\(Int(value.rounded()))" }

    static func percent(_ share: Double) -> String { "\(Double(Int((share * 1000).rounded())) / 10)%" }
}
