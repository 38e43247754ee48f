import FramescopeCore
import Foundation

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
public enum ProtocolFile {
    public static func load(_ path: String) throws -> DissectorSpec {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SpecError("protocol file '\(path)': cannot read it")
        }
        return try parse(data, path: path)
    }

    /// Parses a protocol file's bytes; `path` names it in errors.
    public static func parse(_ data: Data, path: String) throws -> DissectorSpec {
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
