import FramescopeCore

#if canImport(Glibc)
import Glibc
#endif

/// A pcapng reader for the files libpcap 1.10 refuses: those whose interfaces differ in
/// link type or snapshot length ("an interface has a type … different from the type of the
/// first interface"). libpcap stays the reader for everything else; this one takes over a file
/// where libpcap stopped, skipping the packets libpcap already delivered.
struct PcapngBlockReader {
    private struct Interface {
        var linkType: LinkType
        var snapLength: Int
        /// Timestamp units per second, from `if_tsresol` (default 10^6).
        var unitsPerSecond: UInt64
        var offsetSeconds: Int64
    }

    private let file: UnsafeMutablePointer<FILE>
    let path: String
    private var bigEndian = false
    private var interfaces: [Interface] = []
    private var block: [UInt8] = []
    /// Largest block accepted; a larger length means a corrupt file, never an allocation.
    private static let maxBlockLength = 64 << 20

    init?(path: String) {
        guard path != "-", let file = fopen(path, "rb") else { return nil }
        self.file = file
        self.path = path
    }

    func close() { fclose(file) }

    var fileOffset: Int64 { Int64(ftello(file)) }

    enum Next {
        case packet
        case end
        case failure(String)
    }

    /// Calls `body` with the next packet record (EPB, SPB or obsolete PB).
    mutating func next(_ body: (PacketHeader, LinkType, UnsafeRawBufferPointer) -> Void) -> Next {
        while true {
            var head = [UInt8](repeating: 0, count: 8)
            let got = fread(&head, 1, 8, file)
            if got == 0 { return .end }
            if got < 8 { return .failure("truncated block header (\(got) of 8 bytes)") }
            let type = rawU32(head, 0)
            if type == 0x0A0D_0D0A {
                // Section header: its byte-order magic says how to read the rest.
                var magic = [UInt8](repeating: 0, count: 4)
                guard fread(&magic, 1, 4, file) == 4 else { return .failure("truncated section header") }
                switch rawU32(magic, 0) {
                case 0x1A2B_3C4D: bigEndian = true
                case 0x4D3C_2B1A: bigEndian = false
                default: return .failure("bad byte-order magic in section header")
                }
                interfaces.removeAll()
                let length = Int(u32(head, 4))
                guard length >= 28, length % 4 == 0, length <= Self.maxBlockLength else {
                    return .failure("bad section header length \(length)")
                }
                guard skip(length - 12) else { return .failure("truncated section header") }
                continue
            }
            let length = Int(u32(head, 4))
            guard length >= 12, length % 4 == 0, length <= Self.maxBlockLength else {
                return .failure("bad block length \(length) for block type 0x\(String(u32(head, 0), radix: 16))")
            }
            block = [UInt8](repeating: 0, count: length - 8)
            guard fread(&block, 1, length - 8, file) == length - 8 else {
                return .failure("truncated block (type 0x\(String(u32(head, 0), radix: 16)), \(length) bytes)")
            }
            let bodyLength = length - 12
            switch u32(head, 0) {
            case 1: readInterface(bodyLength: bodyLength)
            case 6, 2, 3:
                switch packet(type: u32(head, 0), bodyLength: bodyLength, body) {
                case .some(let message): return .failure(message)
                case .none: return .packet
                }
            default: continue  // name resolution, statistics, custom and unknown blocks
            }
        }
    }

    private mutating func readInterface(bodyLength: Int) {
        guard bodyLength >= 8 else { return }
        var interface = Interface(
            linkType: LinkType(rawValue: Int32(u16(block, 0))), snapLength: Int(u32(block, 4)),
            unitsPerSecond: 1_000_000, offsetSeconds: 0)
        var position = 8
        while position + 4 <= bodyLength {
            let code = u16(block, position), optionLength = Int(u16(block, position + 2))
            let value = position + 4
            if code == 0 || value + optionLength > bodyLength { break }
            if code == 9 && optionLength >= 1 {
                let resolution = block[value]
                let exponent = UInt64(resolution & 0x7F)
                if exponent < 64 {
                    interface.unitsPerSecond = resolution & 0x80 != 0 ? 1 << exponent : power(10, exponent)
                }
            } else if code == 14 && optionLength >= 8 {
                interface.offsetSeconds = Int64(bitPattern: u64(block, value))
            }
            position = value + (optionLength + 3) & ~3
        }
        interfaces.append(interface)
    }

    /// Returns an error message, or nil after calling `body`.
    private func packet(
        type: UInt32, bodyLength: Int, _ body: (PacketHeader, LinkType, UnsafeRawBufferPointer) -> Void
    ) -> String? {
        var interfaceID = 0, captureLength = 0, originalLength = 0, dataOffset = 0
        var units: UInt64 = 0
        switch type {
        case 6, 2:
            // Enhanced packet block; the obsolete packet block differs only in a 16-bit interface ID.
            guard bodyLength >= 20 else { return "packet block too short" }
            interfaceID = type == 6 ? Int(u32(block, 0)) : Int(u16(block, 0))
            units = UInt64(u32(block, 4)) << 32 | UInt64(u32(block, 8))
            captureLength = Int(u32(block, 12))
            originalLength = Int(u32(block, 16))
            dataOffset = 20
        default:  // simple packet block: no interface ID, no timestamp
            guard bodyLength >= 4 else { return "simple packet block too short" }
            originalLength = Int(u32(block, 0))
            captureLength = min(originalLength, bodyLength - 4)
            dataOffset = 4
        }
        guard interfaceID < interfaces.count else { return "packet for undefined interface \(interfaceID)" }
        guard dataOffset + captureLength <= bodyLength else { return "packet data longer than its block" }
        let interface = interfaces[interfaceID]
        let seconds = units / interface.unitsPerSecond
        let fraction = units % interface.unitsPerSecond
        let nanoseconds = fraction.multipliedFullWidth(by: 1_000_000_000)
        let fractionNanos = interface.unitsPerSecond.dividingFullWidth(nanoseconds).quotient
        let header = PacketHeader(
            timestamp: Timestamp(seconds: Int64(seconds) + interface.offsetSeconds, nanoseconds: Int64(fractionNanos)),
            captureLength: captureLength, originalLength: originalLength)
        block.withUnsafeBytes { bytes in
            body(header, interface.linkType, bytes.slice(from: dataOffset, count: captureLength))
        }
        return nil
    }

    private func skip(_ count: Int) -> Bool { fseeko(file, off_t(count), SEEK_CUR) == 0 }

    private func rawU32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }

    private func u16(_ b: [UInt8], _ i: Int) -> UInt16 {
        bigEndian ? UInt16(b[i]) << 8 | UInt16(b[i + 1]) : UInt16(b[i + 1]) << 8 | UInt16(b[i])
    }

    private func u32(_ b: [UInt8], _ i: Int) -> UInt32 {
        let raw = rawU32(b, i)
        return bigEndian ? raw : raw.byteSwapped
    }

    private func u64(_ b: [UInt8], _ i: Int) -> UInt64 {
        let high = UInt64(u32(b, i)), low = UInt64(u32(b, i + 4))
        return bigEndian ? high << 32 | low : low << 32 | high
    }

    private func power(_ base: UInt64, _ exponent: UInt64) -> UInt64 {
        (0..<exponent).reduce(1) { value, _ in value &* base }
    }
}

extension UnsafeRawBufferPointer {
    fileprivate func slice(from: Int, count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: self[from..<(from + count)])
    }
}
