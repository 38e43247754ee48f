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
            commandName: "synth",
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

        @Option(help: "Bodies of varint messages: protobuf (valid) or random (bytes no body check accepts).")
        var bodies: SyntheticTraffic.Bodies = .protobuf

        @Option(
            help: ArgumentHelp(
                "Frame messages by this SPEC instead (a length or delimiter SPEC, preset:NAME or @FILE, whose type values are used).",
                valueName: "spec"))
        var spec: String?

        @Option(help: "How the application writes: mixed, request-response, bulk, nagle or huge.")
        var shape: SyntheticTraffic.Shape = .mixed

        @Option(help: "The server's TCP port.")
        var port: UInt16 = 9000

        @Option(help: "Seed of the generator.")
        var seed: UInt64 = 1

        @Option(help: ArgumentHelp("Fraction of segments sent out of order.", valueName: "fraction"))
        var outOfOrder = 0.01

        @Option(help: ArgumentHelp("Fraction of segments retransmitted.", valueName: "fraction"))
        var retransmissions = 0.01

        @Option(help: ArgumentHelp("Bytes a connection carries (both ways) before it closes, on average.", valueName: "size"))
        var connectionSize = ByteSize(1 << 20)

        @Flag(help: "Start the capture after the first connections opened: each of their directions is picked up inside a write.")
        var lateStart = false

        @Flag(help: "IPv6 endpoints (2001:db8::/32) instead of IPv4 (10.0.0.0/8).")
        var ipv6 = false

        @Option(help: ArgumentHelp("Fraction of writes that begin with junk (varint: a bogus 5-byte length).", valueName: "fraction"))
        var junk = 0.0

        @Option(
            help: ArgumentHelp(
                "Fraction of connections whose client closes mid-message and resends the rest on a new connection (--framing length).",
                valueName: "fraction"))
        var reconnect = 0.0

        @Option(help: ArgumentHelp("Capture at most this many bytes of each packet, as tcpdump -s does.", valueName: "bytes"))
        var snaplen: Int?

        @Flag(help: "Also write every message (client port, direction, offset, length) to FILE.messages.ndjson.")
        var truthMessages = false

        @Option(name: [.customShort("o"), .long], help: "The pcap file to write.")
        var output: String

        func validate() throws {
            if flows < 1 || flows > 1_000_000 { throw ValidationError("--flows must be 1…1000000") }
            if !(0...0.5).contains(outOfOrder) || !(0...0.5).contains(retransmissions) {
                throw ValidationError("--out-of-order and --retransmissions are fractions from 0 to 0.5")
            }
            if !(0...1).contains(junk) || !(0...1).contains(reconnect) { throw ValidationError("--junk and --reconnect are fractions from 0 to 1") }
            if junk > 0 && framing == .lines { throw ValidationError("--junk needs length-prefixed framing: lines resynchronise on their own") }
            if reconnect > 0 && framing != .length {
                throw ValidationError("--reconnect needs --framing length: only a magic shows where a resent tail ends")
            }
            if bodies == .random && (framing != .varint || spec != nil) { throw ValidationError("--bodies random needs --framing varint") }
            if connectionSize.bytes < 64 { throw ValidationError("--connection-size must be at least 64 bytes") }
            if let snaplen, snaplen < 54 { throw ValidationError("--snaplen must be at least 54 (the Ethernet, IPv4 and TCP headers)") }
            if let spec, junk > 0 || reconnect > 0 {
                // Junk and a resent tail are only told apart from messages by a magic or a varint's bogus length.
                guard case .lengthField(let d)? = (try? DissectorOptions.parse(spec))?.kind, !d.magic.isEmpty || (reconnect == 0 && d.encoding == .varint) else {
                    throw ValidationError("--junk and --reconnect with --spec need a SPEC with a magic (--junk: or a varint length)")
                }
            }
        }

        func run() throws {
            var options = SyntheticTraffic.Options()
            options.flows = flows
            options.framing = framing
            options.bodies = bodies
            options.seed = seed
            options.outOfOrderFraction = outOfOrder
            options.retransmissionFraction = retransmissions
            options.bytesPerConnection = connectionSize.bytes
            options.lateStart = lateStart
            options.junkFraction = junk
            options.reconnectFraction = reconnect
            options.shape = shape
            options.serverPort = port
            options.ipv6 = ipv6
            var traffic = SyntheticTraffic(options: options)
            if let spec {
                do {
                    traffic = try SyntheticTraffic(spec: try DissectorOptions.parse(spec), options: options)
                } catch {
                    writeError("framescope: \(error)\n")
                    throw ExitCode(64)
                }
            }
            traffic.recordsMessages = truthMessages
            let file = try createFile(output)
            var writer = CaptureFileWriter(linkType: .ethernet, nanosecond: true, snapLength: UInt32(snaplen ?? 262_144))
            var written = true
            func drain() {
                written = written && writer.bytes.withUnsafeBytes { file.write($0) }
                writer.bytes.removeAll(keepingCapacity: true)
            }
            traffic.generate(bytes: size.bytes) { timestamp, packet in
                writer.add(packet, at: timestamp, captureLength: snaplen)
                if writer.bytes.count >= 1 << 20 { drain() }
            }
            drain()
            guard written else { throw Failure(message: "\(output): write failed") }
            try commit(file)
            try writeJSON(to: output + ".truth.json") { traffic.truth.write(to: &$0) }
            if truthMessages {
                try writeJSON(to: output + ".messages.ndjson", layout: .lines) { w in
                    for m in traffic.messages {
                        w.object { w in
                            w.field("clientPort", Int(m.clientPort))
                            w.field("direction", m.direction.description)
                            w.field("length", m.length)
                            w.field("offset", m.offset)
                        }
                        w.endLine()
                    }
                }
            }
            let t = traffic.truth
            print("wrote \(output): \(counted(t.captureBytes, "byte")), \(counted(t.packets, "packet")), \(counted(t.connections, "connection")), "
                + "\(counted(t.messagesClientToServer + t.messagesServerToClient, "message")); analyze with --dissector '\(t.spec)'")
        }
    }
}

extension SyntheticTraffic.Framing: ExpressibleByArgument {}
extension SyntheticTraffic.Shape: ExpressibleByArgument {}
extension SyntheticTraffic.Bodies: ExpressibleByArgument {}

extension SyntheticTraffic.Truth {
    /// `FILE.truth.json`: the totals `analyze` must report on the capture.
    func write(to w: inout JSONWriter) {
        w.object { w in
            w.field("captureBytes", captureBytes)
            w.field("connections", connections)
            w.key("directions")
            w.object { w in
                for d in Direction.allCases {
                    let t = directions[d]
                    w.key(d == .clientToServer ? "clientToServer" : "serverToClient")
                    w.object { w in
                        w.field("incomplete", t.incomplete)
                        w.field("junkBytes", t.junkBytes)
                        w.field("junkRegions", t.junkRegions)
                        w.field("leadingBytes", t.leadingBytes)
                        w.field("merged", t.merged)
                        w.field("messages", t.messages)
                        w.field("partial", t.partial)
                    }
                }
            }
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
