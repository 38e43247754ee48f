import ArgumentParser
import FramescopeCore
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
                  length:offset=N,width=W[,endian=big|little][,encoding=binary|ascii|hex|varint]
                        [,adjust=±N][,magic=HEX[@OFF]][,type=OFF:WIDTH][,max=SIZE][,preamble=HEX][,headeronly=N]
                                                    frame length = offset + width + value + adjust (Netty's rule)
                  preset:NAME                       \(DissectorSpec.presets.keys.sorted().joined(separator: ", "))
                  @FILE                             a protocol file (JSON or YAML): name, spec or the options above, types
                """,
            valueName: "spec"))
    var dissector: [String] = []

    func choice() throws -> DissectorChoice {
        var choice = DissectorChoice()
        for argument in dissector {
            var text = argument
            var port: UInt16?
            if let equals = argument.firstIndex(of: "="), let value = UInt16(argument[..<equals]) {
                port = value
                text = String(argument[argument.index(after: equals)...])
            }
            let spec = try Self.parse(text)
            if let port {
                choice.byServerPort[port] = spec
            } else if choice.byDefault == nil {
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

/// A protocol file: JSON, or the YAML subset of `key: value` lines with a nested `types:` map.
///
/// ```yaml
/// name: im-gateway
/// spec: length:offset=4,width=4,magic=000000ff,type=8:4
/// types:
///   1: login
///   2: chat
/// ```
/// Instead of `spec`, the options may be keys of their own (`framing: length`, `offset: 4`, …).
enum ProtocolFile {
    static func load(_ path: String) throws -> DissectorSpec {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SpecError("protocol file '\(path)': cannot read it")
        }
        let text = String(decoding: data, as: UTF8.self)
        var fields: [String: String] = [:]
        var types: [String: String] = [:]
        if text.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix("{") {
            guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw SpecError("protocol file '\(path)': not valid JSON")
            }
            for (key, value) in object {
                if key == "types", let map = value as? [String: Any] {
                    for (k, v) in map { types[k] = "\(v)" }
                } else {
                    fields[key] = "\(value)"
                }
            }
        } else {
            var inTypes = false
            for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
                if line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
                let indented = line.first == " " || line.first == "\t"
                guard let colon = line.firstIndex(of: ":") else {
                    throw SpecError("protocol file '\(path)' line \(number + 1): expected 'key: value'")
                }
                let key = line[..<colon].trimmingCharacters(in: .whitespaces)
                var value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                if value.count >= 2, value.first == "\"" || value.first == "'", value.last == value.first {
                    value = String(value.dropFirst().dropLast())
                }
                if indented && inTypes {
                    types[key] = value
                } else {
                    inTypes = key == "types" && value.isEmpty
                    if !inTypes { fields[key] = value }
                }
            }
        }
        let name = fields.removeValue(forKey: "name") ?? path
        var specText: String
        if let spec = fields.removeValue(forKey: "spec") {
            specText = spec
        } else {
            guard let framing = fields.removeValue(forKey: "framing") else {
                throw SpecError("protocol file '\(path)': needs 'spec' or 'framing'")
            }
            let options = fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
            specText = options.isEmpty ? framing : "\(framing):\(options)"
        }
        var spec: DissectorSpec
        do {
            spec = try DissectorSpec(parsing: specText)
        } catch {
            throw SpecError("protocol file '\(path)': \(error.description)")
        }
        spec.name = name
        for (key, value) in types {
            let number = key.lowercased().hasPrefix("0x") ? UInt64(key.dropFirst(2), radix: 16) : UInt64(key)
            guard let number else { throw SpecError("protocol file '\(path)': type value '\(key)' is not a number") }
            spec.typeNames[number] = value
        }
        return spec
    }
}
