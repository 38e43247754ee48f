// Every link type → IP → TCP decoder on arbitrary bytes. The first byte picks the link type.
import FramescopeCore
import FuzzDriver

let linkTypes: [LinkType] = [
    .ethernet, .ethernetMPacket, .linuxSLL, .linuxSLL2, .null, .loop, .raw, .rawBSD, .ipv4, .ipv6, .ppp, .pppHDLC, .ciscoHDLC,
    LinkType(rawValue: 147),
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let input = UnsafeRawBufferPointer(start: start, count: count)
    let linkType = linkTypes[Int(input[0]) % linkTypes.count]
    // A copy of exactly the packet's length, so the address sanitizer sees any over-read.
    let packet = [UInt8](input.dropFirst())
    packet.withUnsafeBytes { bytes in
        if case .tcp(let segment) = PacketDecoder.decode(bytes, linkType: linkType) {
            var sum: UInt8 = 0
            for b in segment.payload { sum &+= b }
            precondition(segment.payload.count <= bytes.count && segment.missingPayload >= 0)
            _ = sum
        }
    }
    return 0
}


@_cdecl("FuzzDecode_main")
func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
