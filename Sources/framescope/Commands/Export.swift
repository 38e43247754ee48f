import ArgumentParser
import FramescopeCore
import FramescopeReport

extension Framescope {
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Write a SPEC as a Wireshark Lua dissector, a Kaitai Struct description or a Netty frame decoder.",
            discussion: """
                lua: a dissector for tshark and Wireshark (-X lua_script:FILE) that frames each TCP stream \
                as framescope does, with the length and the type as fields (the protocol file's type \
                names included). kaitai: a .ksy of one frame (header fields, length, body) and of a stream \
                as frames. netty: the LengthFieldBasedFrameDecoder to put in a pipeline, and what Netty \
                cannot express of the SPEC. SPEC auto with --from CAPTURE exports what inference chose \
                for the capture (the port given with --port, else the one with the most streams).
                """)

        @Argument(help: ArgumentHelp("A length SPEC, preset:NAME, @FILE (a protocol file), or auto (with --from).", valueName: "spec"))
        var spec: String

        @Option(name: .long, help: "lua, kaitai or netty.")
        var format: String = "lua"

        @Option(name: .long, help: ArgumentHelp("With SPEC auto: the capture to infer the framing from.", valueName: "capture"))
        var from: String?

        @Option(name: .long, help: ArgumentHelp("TCP server port the Lua dissector registers on (repeatable; any other: Decode As).", valueName: "port"))
        var port: [UInt16] = []

        @Option(name: .long, help: ArgumentHelp("Protocol name in Wireshark (display filter fs_NAME); default: the preset's or protocol file's name, else framescope.", valueName: "name"))
        var name: String?

        @Option(name: [.customShort("o"), .long], help: ArgumentHelp("Write to this file instead of standard output.", valueName: "file"))
        var output: String?

        func validate() throws {
            if !["lua", "kaitai", "netty"].contains(format) { throw ValidationError("--format is lua, kaitai or netty") }
            if (spec == "auto") != (from != nil) { throw ValidationError("SPEC auto and --from CAPTURE go together") }
        }

        func run() throws {
            var parsed: DissectorSpec
            var ports = port
            if let from {
                (parsed, ports) = try inferred(from)
            } else {
                do { parsed = try DissectorOptions.parse(spec) } catch {
                    writeError("framescope: \(error)\n")
                    throw ExitCode(64)
                }
            }
            let text: String
            do {
                switch format {
                case "lua": text = try LuaDissectorExport.script(parsed, ports: ports, name: name)
                case "kaitai": text = try KaitaiExport.ksy(parsed, name: name)
                default: text = try NettyExport.java(parsed)
                }
            } catch {
                writeError("framescope: export: \(error.description)\n")
                throw ExitCode(64)
            }
            try emit(text, to: output)
        }

        /// The SPEC inference chose for `capture` (the `--port` given, else the port with the most
        /// streams that has one), and the port to register it on. Exit 1 when none was chosen.
        private func inferred(_ capture: String) throws -> (DissectorSpec, [UInt16]) {
            let input = try InputOptions.parse([capture, "--quiet"])
            let ports = try inferFraming(input: input, limits: try LimitOptions.parse([]), minimumEvidence: RecoveryBudget.defaultThreshold)
            let candidates = ports.filter { port.isEmpty || port.contains($0.port) }
            guard let best = candidates.filter({ $0.chosen != nil }).max(by: { $0.streams < $1.streams }), let chosen = best.chosen else {
                for p in candidates { writeError("framescope: export auto: " + InferenceTextFormatter.line(p) + "\n") }
                throw Failure(message: "export auto: no framing inferred for \(capture)\(port.isEmpty ? "" : " on port \(port.map(String.init).joined(separator: ", "))")")
            }
            writeError("framescope: export auto: " + InferenceTextFormatter.line(best) + "\n")
            var spec = try DissectorSpec(parsing: chosen.spec)
            spec.name = name ?? "auto"
            return (spec, [best.port])
        }
    }
}
