import ArgumentParser
import FramescopeCore
import FramescopeReport

extension Framescope {
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a length-field SPEC as a Wireshark Lua dissector or a Netty frame decoder.",
            discussion: """
                lua: a dissector for tshark and Wireshark (-X lua_script:FILE) that frames each TCP stream \
                as framescope does, with the length and the type as fields (the protocol file's type \
                names included). netty: the LengthFieldBasedFrameDecoder to put in a pipeline, and what \
                Netty cannot express of the SPEC.
                """)

        @Argument(help: ArgumentHelp("A length SPEC, preset:NAME or @FILE (a protocol file).", valueName: "spec"))
        var spec: String

        @Option(name: .long, help: "lua or netty.")
        var format: String = "lua"

        @Option(name: .long, help: ArgumentHelp("TCP server port the Lua dissector registers on (repeatable; any other: Decode As).", valueName: "port"))
        var port: [UInt16] = []

        @Option(name: .long, help: ArgumentHelp("Protocol name in Wireshark (display filter fs_NAME); default: the preset's or protocol file's name, else framescope.", valueName: "name"))
        var name: String?

        @Option(name: [.customShort("o"), .long], help: ArgumentHelp("Write to this file instead of standard output.", valueName: "file"))
        var output: String?

        func validate() throws {
            if format != "lua" && format != "netty" { throw ValidationError("--format is lua or netty") }
        }

        func run() throws {
            let parsed: DissectorSpec
            do { parsed = try DissectorOptions.parse(spec) } catch {
                writeError("framescope: \(error)\n")
                throw ExitCode(64)
            }
            let text: String
            do {
                text = format == "lua" ? try LuaDissectorExport.script(parsed, ports: port, name: name) : try NettyExport.java(parsed)
            } catch {
                writeError("framescope: export: \(error.description)\n")
                throw ExitCode(64)
            }
            try emit(text, to: output)
        }
    }
}
