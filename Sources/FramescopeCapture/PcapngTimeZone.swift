#if canImport(Glibc)
import Glibc
#endif

/// The time zone a pcapng file names for its interfaces: the `if_iana_tzname` option (code 18,
/// an IANA name such as `Europe/Berlin`) of the first interface description that has one, read
/// from the blocks before the first packet. libpcap does not hand out interface options, so the
/// file's head is read here; nil for a pcap file, a pcapng without the option, or anything
/// unreadable. (`if_tzone`, code 10, was never specified and is not read.)
enum PcapngTimeZone {
    /// How far into the file to look: interface descriptions come before their packets.
    private static let headLimit = 1 << 20

    static func read(path: String) -> String? {
        guard path != "-", let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var head = [UInt8](repeating: 0, count: headLimit)
        let count = fread(&head, 1, headLimit, file)
        return find(in: head[..<count])
    }

    /// The zone in a pcapng file's first bytes.
    static func find(in bytes: ArraySlice<UInt8>) -> String? {
        let base = bytes.startIndex
        guard bytes.count >= 12, u32(bytes, base, bigEndian: false) == 0x0A0D_0D0A else { return nil }
        let bigEndian: Bool
        switch u32(bytes, base + 8, bigEndian: false) {
        case 0x1A2B_3C4D: bigEndian = false
        case 0x4D3C_2B1A: bigEndian = true
        default: return nil
        }
        var at = base
        while at + 12 <= bytes.endIndex {
            let type = u32(bytes, at, bigEndian: bigEndian), length = Int(u32(bytes, at + 4, bigEndian: bigEndian))
            guard length >= 12, length % 4 == 0, at + length <= bytes.endIndex else { return nil }
            switch type {
            case 1:  // interface description: link type (2), reserved (2), snaplen (4), then options
                if let zone = option(18, in: bytes[(at + 16)..<(at + length - 4)], bigEndian: bigEndian) {
                    return String(decoding: zone, as: UTF8.self)
                }
            case 2, 3, 6:  // packet blocks: the interfaces are all described by now
                return nil
            default:
                break
            }
            at += length
        }
        return nil
    }

    /// The value of option `code` in an options list (code, length, value padded to 4).
    private static func option(_ code: UInt16, in options: ArraySlice<UInt8>, bigEndian: Bool) -> ArraySlice<UInt8>? {
        var at = options.startIndex
        while at + 4 <= options.endIndex {
            let c = u16(options, at, bigEndian: bigEndian), length = Int(u16(options, at + 2, bigEndian: bigEndian))
            if c == 0 { return nil }  // opt_endofopt
            guard at + 4 + length <= options.endIndex else { return nil }
            if c == code, length > 0 { return options[(at + 4)..<(at + 4 + length)] }
            at += 4 + (length + 3) / 4 * 4
        }
        return nil
    }

    private static func u16(_ b: ArraySlice<UInt8>, _ i: Int, bigEndian: Bool) -> UInt16 {
        bigEndian ? UInt16(b[i]) << 8 | UInt16(b[i + 1]) : UInt16(b[i + 1]) << 8 | UInt16(b[i])
    }

    private static func u32(_ b: ArraySlice<UInt8>, _ i: Int, bigEndian: Bool) -> UInt32 {
        let bytes = (0..<4).map { UInt32(b[i + $0]) }
        return bigEndian
            ? bytes[0] << 24 | bytes[1] << 16 | bytes[2] << 8 | bytes[3] : bytes[3] << 24 | bytes[2] << 16 | bytes[1] << 8 | bytes[0]
    }
}
