import FramescopeCore
import FoundationEssentials  // FileManager, Data and JSONDecoder (not Foundation: 9 MB of RSS)

/// A protocol file: JSON, or the YAML subset of `key: value` lines with a nested `types:` map.
///
/// ```yaml
/// name: im-gateway
/// spec: length:offset=4,width=4,magic=000000ff,type=8:4
/// types:
///   1: login
///   2: chat
///   3: ok
/// requests: login, chat
/// responses: ok
/// ```
/// Instead of `spec`, the options may be keys of their own (`framing: length`, `offset: 4`, …).
/// `requests` and `responses` (type values or names) pair requests with their responses for the
/// response times; without them every client message is a request and every server one answers.
public enum ProtocolFile {
    public static func load(_ path: String) throws -> DissectorSpec {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SpecError("protocol file '\(path)': cannot read it")
        }
        return try parse(data, path: path)
    }

    /// Parses a protocol file's bytes; `path` names it in errors, with the line of the key at fault.
    public static func parse(_ data: Data, path: String) throws -> DissectorSpec {
        let text = String(decoding: data, as: UTF8.self)
        var fields: [String: String] = [:]
        var types: [String: String] = [:]
        /// Where each key (and each type value, as "types.VALUE") was written.
        var lines: [String: Int] = [:]
        func fail(_ message: String, at key: String? = nil) -> SpecError {
            let line = key.flatMap { lines[$0] }.map { " line \($0)" } ?? ""
            return SpecError("protocol file '\(path)'\(line): \(message)")
        }
        if text.first(where: { !$0.isWhitespace }) == "{" {
            guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: data) else {
                throw fail("not valid JSON")
            }
            // JSON has no line numbers of its own: a key's line is where its quoted name first appears.
            func line(of key: String) -> Int? {
                text.firstRange(of: "\"\(key)\"").map { text[..<$0.lowerBound].reduce(1) { $1 == "\n" ? $0 + 1 : $0 } }
            }
            for (key, value) in object {
                lines[key] = line(of: key)
                if key == "types" {
                    guard case .object(let map) = value else { throw fail("'types' must map type values to names", at: key) }
                    for (k, v) in map {
                        types[k] = v ?? ""
                        lines["types." + k] = line(of: k)
                    }
                } else if let text = value.text {
                    fields[key] = text
                } else if case .list(let items) = value, Self.pairingKeys.contains(key) {
                    fields[key] = items.joined(separator: ",")
                } else {
                    throw fail("'\(key)' must be a string or a number", at: key)
                }
            }
        } else {
            var inTypes = false
            for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
                if line.allSatisfy(\.isWhitespace) { continue }
                let at = " line \(number + 1)"
                let indented = line.first == " " || line.first == "\t"
                guard let colon = line.firstIndex(of: ":") else {
                    throw SpecError("protocol file '\(path)'\(at): expected 'key: value'")
                }
                let key = line[..<colon].trimmingSpaces
                var value = line[line.index(after: colon)...].trimmingSpaces
                if Self.pairingKeys.contains(key), value.first == "[", value.last == "]" {
                    value = String(value.dropFirst().dropLast())
                } else if value.first == "{" || value.first == "[" {
                    throw SpecError(
                        "protocol file '\(path)'\(at): '\(key): \(value)' is a YAML flow collection, which protocol files do not read; "
                            + "write 'types:' and then one indented 'VALUE: NAME' line per type")
                }
                if value.count >= 2, value.first == "\"" || value.first == "'", value.last == value.first {
                    value = String(value.dropFirst().dropLast())
                }
                if indented {
                    guard inTypes else { throw SpecError("protocol file '\(path)'\(at): '\(key)' is indented, but only the entries of 'types:' are") }
                    guard types[key] == nil else { throw SpecError("protocol file '\(path)'\(at): type \(key) is named twice") }
                    types[key] = value
                    lines["types." + key] = number + 1
                } else {
                    guard lines[key] == nil else { throw SpecError("protocol file '\(path)'\(at): '\(key)' is given twice") }
                    lines[key] = number + 1
                    inTypes = key == "types" && value.isEmpty
                    if !inTypes { fields[key] = value }
                }
            }
        }
        for key in fields.keys.sorted(by: { (lines[$0] ?? 0) < (lines[$1] ?? 0) }) where !Self.keys.contains(key.lowercased()) {
            throw fail("unknown key '\(key)': a protocol file has name, spec (or framing and its options: \(Self.optionKeys.sorted().joined(separator: ", "))), types, requests and responses", at: key)
        }
        let name = fields.removeValue(forKey: "name") ?? path
        let pairing = Self.pairingKeys.compactMap { key in fields.removeValue(forKey: key).map { (key, $0) } }
        var specText: String
        if let spec = fields.removeValue(forKey: "spec") {
            if let other = fields.keys.sorted(by: { (lines[$0] ?? 0) < (lines[$1] ?? 0) }).first {
                throw fail("'\(other)' next to 'spec': give the options inside the spec, or as keys with 'framing', not both", at: other)
            }
            specText = spec
        } else {
            guard let framing = fields.removeValue(forKey: "framing") else {
                throw fail("needs 'spec' or 'framing'")
            }
            let options = fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
            specText = options.isEmpty ? framing : "\(framing):\(options)"
        }
        var spec: DissectorSpec
        do {
            spec = try DissectorSpec(parsing: specText)
        } catch {
            // Name the line of the option at fault when the SPEC names one.
            // (Read past the quoted SPEC itself: it names every option.)
            let said = error.description.replacing("'\(specText)'", with: "")
            let key = fields.keys.sorted().first { said.contains("'\($0)'") || said.contains("'\($0)=") || said.contains(" \($0)=") }
            throw fail(error.description, at: key ?? (lines["spec"] != nil ? "spec" : "framing"))
        }
        spec.name = name
        let typeLimit = Self.largestType(of: spec)
        for (key, value) in types.sorted(by: { (lines["types." + $0.key] ?? 0) < (lines["types." + $1.key] ?? 0) }) {
            let number = key.lowercased().hasPrefix("0x") ? UInt64(key.dropFirst(2), radix: 16) : UInt64(key)
            guard let number else { throw fail("type value '\(key)' is not a number", at: "types." + key) }
            guard let typeLimit else {
                throw fail("names type \(key), but '\(spec.text)' has no type field (add type=OFFSET:WIDTH)", at: "types." + key)
            }
            guard number <= typeLimit else {
                throw fail("type \(key) cannot occur: the type field holds at most \(typeLimit)", at: "types." + key)
            }
            spec.typeNames[number] = value
        }
        for (key, list) in pairing {
            guard let typeLimit else { throw fail("pairs \(key) by type, but '\(spec.text)' has no type field (add type=OFFSET:WIDTH)", at: key) }
            var values: Set<UInt64> = []
            for item in list.split(separator: ",").map({ String($0.trimmingSpaces) }) where !item.isEmpty {
                let number = item.lowercased().hasPrefix("0x") ? UInt64(item.dropFirst(2), radix: 16) : UInt64(item)
                guard let value = number ?? spec.typeNames.first(where: { $0.value == item })?.key else {
                    throw fail("'\(item)' in \(key) is neither a type value nor a name under 'types'", at: key)
                }
                guard value <= typeLimit else { throw fail("type \(item) in \(key) cannot occur: the type field holds at most \(typeLimit)", at: key) }
                values.insert(value)
            }
            guard !values.isEmpty else { throw fail("'\(key)' names no type", at: key) }
            if key == "requests" { spec.requestTypes = values } else { spec.responseTypes = values }
        }
        return spec
    }

    /// The SPEC options a protocol file may give as keys of their own (with Netty's long names).
    static let optionKeys: Set = [
        "adjust", "body", "bodymagic", "encoding", "endian", "headeronly", "magic", "max", "min", "offset", "preamble", "type", "width",
        "lengthfieldoffset", "lengthfieldlength", "lengthadjustment", "maxframelength", "byteorder", "endianness", "length",
    ]
    /// The types that are requests and the types that answer one, for the response times.
    static let pairingKeys = ["requests", "responses"]
    static let keys = optionKeys.union(["name", "spec", "framing"]).union(pairingKeys)

    /// The largest value the SPEC's type field can hold; nil when it has none.
    static func largestType(of spec: DissectorSpec) -> UInt64? {
        switch spec.kind {
        case .lengthField(let d):
            guard let field = d.typeField else { return nil }
            return field.width >= 8 ? .max : (1 << (8 * UInt64(field.width))) - 1
        case .postgres: return 255
        case .delimiter: return nil
        }
    }
}

/// A JSON value of a protocol file, as text the way the SPEC reads it.
private enum JSONValue: Decodable {
    case scalar(String)
    case object([String: String?])
    /// An array of scalars.
    case list([String])
    case collection

    init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let s = try? c.decode(String.self) {
            self = .scalar(s)
        } else if let b = try? c.decode(Bool.self) {
            self = .scalar(b ? "1" : "0")  // (as JSONSerialization's numbers printed them)
        } else if let i = try? c.decode(Int64.self) {
            self = .scalar(String(i))
        } else if let u = try? c.decode(UInt64.self) {
            self = .scalar(String(u))
        } else if let d = try? c.decode(Double.self) {
            self = .scalar(d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d))
        } else if let map = try? c.decode([String: JSONValue].self) {
            self = .object(map.mapValues(\.text))
        } else if let items = try? c.decode([JSONValue].self), items.allSatisfy({ $0.text != nil }) {
            self = .list(items.compactMap(\.text))
        } else if c.decodeNil() {
            self = .scalar("<null>")
        } else {
            self = .collection
        }
    }

    /// nil for an array or an object.
    var text: String? {
        if case .scalar(let s) = self { return s }
        return nil
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: String {
        String(drop { $0.isWhitespace && !$0.isNewline }.reversed().drop { $0.isWhitespace && !$0.isNewline }.reversed())
    }
}
