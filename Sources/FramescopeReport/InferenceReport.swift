import FramescopeCore

/// `framescope infer --format json` (`framescope.infer/1`, docs/json-schemas.md): per server port
/// the framing chosen, how sure, and the candidates with their evidence.
public struct InferenceReport: Sendable {
    public var schema = "framescope.infer/1"
    public var ports: [FramingInference.PortInference]
    public var minimumEvidence: Double

    public init(ports: [FramingInference.PortInference], minimumEvidence: Double) {
        self.ports = ports
        self.minimumEvidence = minimumEvidence
    }

    public func write(to w: inout JSONWriter) {
        w.object { w in
            w.field("minimumEvidenceBits", minimumEvidence)
            w.key("ports")
            Self.write(ports, to: &w)
            w.field("schema", schema)
        }
    }

    /// The ports array, as `infer` writes it and the analysis report's `inference` holds it.
    public static func write(_ ports: [FramingInference.PortInference], to w: inout JSONWriter) {
        w.array(ports) { w, p in
            w.object { w in
                w.key("candidates")
                w.array(p.candidates) { w, c in
                    w.object { w in
                        w.field("alignmentBits", rounded(c.alignmentBits))
                        w.field("bodyBits", rounded(c.bodyBits))
                        w.field("completeStreams", c.completeStreams)
                        w.field("coverage", rounded(c.coverage, places: 4))
                        w.field("endBits", rounded(c.endBits))
                        w.field("equivalentSpecs", c.equivalentSpecs)
                        w.field("evidenceBits", rounded(c.evidenceBits))
                        w.field("firstProblem", c.firstProblem)
                        w.field("frames", c.frames)
                        w.field("malformedHeaders", c.malformedHeaders)
                        w.field("spec", c.spec)
                        w.field("streamsEndingOnFrame", c.streamsEndingOnFrame)
                        w.field("structureBits", rounded(c.structureBits))
                    }
                }
                w.field("confidence", rounded(p.confidence, places: 4))
                w.key("marginBits")
                if let margin = p.marginBits { w.double(rounded(margin)) } else { w.null() }
                w.field("midStreamStreams", p.midStreamStreams)
                w.field("port", Int(p.port))
                w.field("reason", p.reason)
                w.field("sampledBytes", p.bytes)
                w.field("spec", p.chosen?.spec)
                w.field("streams", p.streams)
                w.field("verdict", p.verdict.rawValue)
            }
        }
    }

    static func rounded(_ value: Double, places: Int = 1) -> Double {
        let scale = [1.0, 10, 100, 1000, 10000][places]
        return (value * scale).rounded() / scale
    }
}
