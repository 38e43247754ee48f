/// A pcap LINKTYPE_ value (https://www.tcpdump.org/linktypes.html): an open set, like `Errno`.
public struct LinkType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let null = LinkType(rawValue: 0)             // BSD loopback, host-order family
    public static let ethernet = LinkType(rawValue: 1)
    public static let ppp = LinkType(rawValue: 9)
    public static let rawBSD = LinkType(rawValue: 12)          // DLT_RAW on some BSDs
    public static let rawOpenBSD = LinkType(rawValue: 14)
    public static let pppHDLC = LinkType(rawValue: 50)
    public static let raw = LinkType(rawValue: 101)
    public static let ciscoHDLC = LinkType(rawValue: 104)
    public static let loop = LinkType(rawValue: 108)           // OpenBSD loopback, network-order family
    public static let linuxSLL = LinkType(rawValue: 113)
    public static let ipv4 = LinkType(rawValue: 228)
    public static let ipv6 = LinkType(rawValue: 229)
    public static let ethernetMPacket = LinkType(rawValue: 274)
    public static let linuxSLL2 = LinkType(rawValue: 276)

    public var description: String {
        switch self {
        case .null: "NULL"
        case .ethernet: "ETHERNET"
        case .ppp: "PPP"
        case .rawBSD, .rawOpenBSD, .raw: "RAW"
        case .pppHDLC: "PPP_HDLC"
        case .ciscoHDLC: "C_HDLC"
        case .loop: "LOOP"
        case .linuxSLL: "LINUX_SLL"
        case .ipv4: "IPV4"
        case .ipv6: "IPV6"
        case .ethernetMPacket: "ETHERNET_MPACKET"
        case .linuxSLL2: "LINUX_SLL2"
        default: "LINKTYPE_\(rawValue)"
        }
    }
}
