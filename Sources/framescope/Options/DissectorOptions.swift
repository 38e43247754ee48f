import ArgumentParser
import FramescopeCore
import FramescopeReport
import Foundation

/// `--dissector SPEC` and `--dissector PORT=SPEC`, with `@FILE` protocol files.
struct DissectorOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "How to cut streams into messages: SPEC for every connection, or PORT=SPEC for connections to that server port (repeatable).",
            discussion: """
                SPEC is one of:
                  varint[:max=SIZE]                 protobuf varint32 length prefix (writeDelimitedTo)
                  delimiter[:SEQ][,max=SIZE]        SEQ: \\r\\n (default), \\n, \\0, escaped text, or hex 0x0d0a
                  lines                             delimiter:\\n (a preceding \\r stays in the frame)
                  length:offset=N,width=W[,endian=big|little][,encoding=binary|ascii|hex|varint|ber]
                        [,adjust=±N][,magic=HEX[@OFF]][,type=OFF:WIDTH][,max=SIZE][,preamble=HEX][,headeronly=N][,bodymagic=HEX]
                                                    frame length = offset + width + value + adjust (Netty's rule)
                  preset:NAME                       \(DissectorSpec.presets.keys.sorted().joined(separator: ", "))
                  @FILE                             a protocol file (JSON or YAML): name, spec or the options above, types
                  auto                              infer the framing from the streams (analyze; prints the SPEC it chose)
                """,
            valueName: "spec"))
    var dissector: [String] = []

    /// `--dissector auto` was given (for every connection without a port SPEC).
    var wantsAuto: Bool { dissector.contains("auto") }

    func choice() throws -> DissectorChoice {
        var choice = DissectorChoice()
        for argument in dissector where argument != "auto" {
            var text = argument
            var port: UInt16?
            if let equals = argument.firstIndex(of: "="), argument[..<equals].allSatisfy(\.isASCII), let value = Int(argument[..<equals]) {
                guard (1...65535).contains(value) else {
                    throw SpecError("port \(value) in '\(argument)' is out of range: a server port is 1 to 65535")
                }
                port = UInt16(value)
                text = String(argument[argument.index(after: equals)...])
            }
            let spec = try Self.parse(text)
            if let port {
                guard choice.byServerPort[port] == nil else {
                    throw SpecError("port \(port) has two SPECs ('\(choice.byServerPort[port]!.text)' and '\(text)'): give one --dissector per port")
                }
                choice.byServerPort[port] = spec
            } else if choice.byDefault == nil && !wantsAuto {
                choice.byDefault = spec
            } else {
                throw SpecError("--dissector given twice without a port: use PORT=SPEC for the second")
            }
        }
        return choice
    }

    /// The choice, or one line on standard error and exit status 64.
    func choiceOrExit() throws -> DissectorChoice {
        do {
            return try choice()
        } catch let error as SpecError {
            writeError("framescope: \(error.description)\n")
            throw ExitCode(64)
        }
    }

    static func parse(_ text: String) throws -> DissectorSpec {
        if text.hasPrefix("@") { return try ProtocolFile.load(String(text.dropFirst())) }
        return try DissectorSpec(parsing: text)
    }
}

