/// A capture that could not be read, or not to the end. One line, naming the file and
/// saying what was read before it broke.
public enum CaptureError: Error, CustomStringConvertible, Equatable {
    /// libpcap could not open it: not a capture, unreadable, or an empty file.
    case cannotOpen(path: String, message: String)
    /// Reading stopped in the middle: a truncated or corrupt record.
    case broken(path: String, message: String, packetsRead: Int, lastFrame: UInt64, byteOffset: Int64?)
    case badFilter(expression: String, message: String)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let message):
            var hint = ""
            if message.contains("unknown file format") { hint = " (not a pcap or pcapng capture)" }
            if message.contains("truncated dump file") || message.contains("cut short") { hint = " (the file ends inside its header)" }
            return "\(path): cannot read capture: \(message)\(hint)"
        case .broken(let path, let message, let packets, let lastFrame, let offset):
            let at = offset.map { " near byte \($0)" } ?? ""
            let frame = lastFrame > 0 ? ", frame \(lastFrame) is the last one read" : ""
            return "\(path): capture broken after \(packets) packets\(at)\(frame): \(message)"
        case .badFilter(let expression, let message):
            return "invalid filter '\(expression)': \(message)"
        }
    }
}
