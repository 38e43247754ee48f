#if canImport(Glibc)
import Glibc
#endif

/// A capture that could not be read, or not to the end. One line, naming the file and
/// saying what was read before it broke.
public enum CaptureError: Error, CustomStringConvertible, Equatable {
    /// libpcap could not open it: not a capture, unreadable, or an empty file.
    case cannotOpen(path: String, message: String)
    /// Reading stopped in the middle: a truncated or corrupt record.
    case broken(path: String, message: String, packetsRead: Int, lastFrame: UInt64, byteOffset: Int64?)
    case badFilter(expression: String, message: String)
    /// The `--write` file could not be created or completed.
    case cannotWrite(path: String, message: String)
    case permissionDenied(interface: String, message: String)
    case noSuchInterface(interface: String, available: [String])
    case interfaceDown(interface: String)
    case live(interface: String, message: String)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let message):
            var hint = ""
            if message.contains("unknown file format") { hint = " (not a pcap or pcapng capture)" }
            if message.contains("truncated dump file") || message.contains("cut short") { hint = " (the file ends inside its header)" }
            if message.contains("only got 0") { hint = " (the file is empty)" }
            let reason = message.hasPrefix(path + ": ") ? String(message.dropFirst(path.count + 2)) : message  // libpcap names the file too
            return "\(path): cannot read capture: \(reason)\(hint)"
        case .broken(let path, let message, let packets, let lastFrame, let offset):
            let at = offset.map { " near byte \($0)" } ?? ""
            let frame = lastFrame > 0 ? ", frame \(lastFrame) is the last one read" : ""
            return "\(path): capture broken after \(packets) packets\(at)\(frame): \(message)"
        case .cannotWrite(let path, let message):
            return "\(path): cannot write: \(message)"
        case .badFilter(let expression, let message):
            return "invalid filter '\(expression)': \(message)"
        case .permissionDenied(let interface, _):
            return "no permission to capture on \(interface): run as root, or let the binary capture with "
                + "'sudo setcap cap_net_raw,cap_net_admin=eip \(executablePath)'"
        case .noSuchInterface(let interface, let available):
            return "no capture interface '\(interface)'; available: \(available.isEmpty ? "none" : available.joined(separator: ", ")) (framescope watch --list)"
        case .interfaceDown(let interface):
            return "interface \(interface) is down: bring it up with 'sudo ip link set \(interface) up'"
        case .live(let interface, let message):
            return interface.isEmpty ? "capture: \(message)" : "cannot capture on \(interface): \(message)"
        }
    }
}

/// This program's path, for the setcap hint.
private var executablePath: String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    return n > 0 ? String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "framescope"
}
