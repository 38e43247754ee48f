import ArgumentParser
import FramescopeCore
import FramescopeReport

/// `--dissector SPEC` and `--dissector PORT=SPEC`, with `@FILE` protocol files.
struct DissectorOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "How to cut streams into messages: SPEC for every connection, or PORT=SPEC for connections to that server port (repeatable).",
            discussion: """
                SPEC is one of:
                varint[:max=SIZE]
                  a protobuf varint32 length, then the message (writeDelimitedTo)
                delimiter[:SEQ][,max=SIZE]
                  frames end with SEQ: \\r\\n (default), \\n, \\0, \\xHH, or hex 0x0d0a
                lines[:max=SIZE]
                  delimiter:\\n (a \\r before it stays in the frame)
                length:offset=N,width=W[,KEY=VALUE...]
                  a length field; frame = offset + width + value + adjust
                  (Netty's rule). Keys, with their defaults:
                  endian=big|little      byte order of a binary field (big)
                  encoding=E             binary, ascii (digits), hex, varint
                                         (LEB128) or ber (binary)
                  adjust=±N              added to the value (0)
                  magic=HEX[@OFF]        bytes every frame has at OFF (none)
                  type=OFF:WIDTH         a type field, counted per value (none)
                  max=SIZE, min=N        longest frame (16M), shortest (header)
                  preamble=HEX           stream prefix that is no message (none)
                  headeronly=N           lengths below N: header only (off)
                  body=N                 where the body starts (after header)
                  bodymagic=HEX          bytes every body starts with (none)
                preset:NAME
                  \(Self.presetList)
                @FILE
                  a protocol file (JSON or YAML): name, spec or framing and
                  the keys above, types (README: "protocol file")
                auto
                  infer the framing from the streams (prints the SPEC chosen)

                Examples with a field after the length:
                  length:offset=0,width=4,adjust=2
                    4-byte length of the body, then a 2-byte field the length
                    does not count
                  length:offset=5,width=2,type=2:2
                    7-byte header: version, function (the type), zip, length
                  length:offset=4,width=4,magic=000000ff,type=8:4
                    0x000000ff, the body's length, a 4-byte command ID
                """,
            valueName: "spec"))
    var dissector: [String] = []

    /// The presets, wrapped to the help's width, with their caveats.
    static var presetList: String {
        let caveats = ["tls": "tls (records up to 18437)", "postgres": "postgres (startup untyped)", "tpkt": "tpkt (ISO-TSAP, S7comm, RDP)"]
        var lines: [String] = [], line = ""
        for name in DissectorSpec.presets.keys.sorted() {
            let item = (caveats[name] ?? name) + ","
            if !line.isEmpty && line.count + item.count + 1 > 62 {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + item
        }
        lines.append(String(line.dropLast()))
        return lines.joined(separator: "\n  ")
    }

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

