import FramescopeSynthetic
import ArgumentParser
import FramescopeCore
import FramescopeReport

#if canImport(Glibc)
import Glibc
#endif

extension Framescope {
    struct Synth: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a synthetic capture of framed TCP traffic, and the totals it holds (FILE.truth.json).",
            discussion: """
                Deterministic from --seed: --flows connections at once, messages both ways (mostly 20–200 B, some \
                up to 64 KiB) packed into MSS-sized segments, with out-of-order and retransmitted segments. \
                Analyze it with the SPEC printed at the end; its totals equal FILE.truth.json.
                """)

        @Option(help: ArgumentHelp("Approximate capture size (e.g. 100M, 1G).", valueName: "size"))
        var size: ByteSize = ByteSize(100 << 20)

        @Option(help: "Connections active at once.")
        var flows = 1000

        @Option(help: "How messages are framed: varint, length (12-byte header) or lines.")
        var framing: SyntheticTraffic.Framing = .varint

        @Option(help: "Seed of the generator.")
        var seed: UInt64 = 1

        @Option(help: ArgumentHelp("Fraction of segments sent out of order.", valueName: "fraction"))
        var outOfOrder = 0.01

        @Option(help: ArgumentHelp("Fraction of segments retransmitted.", valueName: "fraction"))
        var retransmissions = 0.01

        @Option(name: [.customShort("o"), .long], help: "The pcap file to write.")
        var output: String

        func validate() throws {
            if flows < 1 || flows > 1_000_000 { throw ValidationError("--flows must be 1…1000000") }
            if !(0...0.5).contains(outOfOrder) || !(0...0.5).contains(retransmissions) {
                throw ValidationError("--out-of-order and --retransmissions are fractions from 0 to 0.5")
            }
        }

        func run() throws {
            guard let file = fopen(output, "wb") else {
                throw Failure(message: "\(output): cannot write: \(String(cString: strerror(errno)))")
            }
            var options = SyntheticTraffic.Options()
            options.flows = flows
            options.framing = framing
            options.seed = seed
            options.outOfOrderFraction = outOfOrder
            options.retransmissionFraction = retransmissions
            var traffic = SyntheticTraffic(options: options)
            var writer = CaptureFileWriter(linkType: .ethernet, nanosecond: true)
            func drain() {
                _ = writer.bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
                writer.bytes.removeAll(keepingCapacity: true)
            }
            traffic.generate(bytes: size.bytes) { timestamp, packet in
                writer.add(packet, at: timestamp)
                if writer.bytes.count >= 1 << 20 { drain() }
            }
            drain()
            fclose(file)
            try writeJSON(to: output + ".truth.json") { traffic.truth.write(to: &$0) }
            let t = traffic.truth
            print("wrote \(output): \(t.captureBytes) bytes, \(t.packets) packets, \(t.connections) connections, "
                + "\(t.messagesClientToServer + t.messagesServerToClient) messages; analyze with --dissector '\(t.spec)'")
        }
    }
}

extension SyntheticTraffic.Framing: ExpressibleByArgument {}

extension SyntheticTraffic.Truth {
    /// `FILE.truth.json`: the totals `analyze` must report on the capture.
    func write(to w: inout JSONWriter) {
        w.object { w in
            w.field("captureBytes", captureBytes)
            w.field("connections", connections)
            w.field("messagesClientToServer", messagesClientToServer)
            w.field("messagesServerToClient", messagesServerToClient)
            w.field("outOfOrderSegments", outOfOrderSegments)
            w.field("packets", packets)
            w.field("payloadBytes", payloadBytes)
            w.field("retransmittedSegments", retransmittedSegments)
            w.field("spec", spec)
        }
    }
}
