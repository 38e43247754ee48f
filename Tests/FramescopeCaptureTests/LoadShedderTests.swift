import FramescopeCore
import FramescopeSynthetic
import Testing

@testable import FramescopeCapture

/// The capture thread's load shedding: a connection that lost a packet to a full queue is let go
/// whole (both directions), the others are untouched, and nothing is decoded before the first drop.
struct LoadShedderTests {
    let builder = PacketBuilder()

    func packet(_ from: String, _ to: String) -> [UInt8] {
        builder.tcp(from: Endpoint(from)!, to: Endpoint(to)!, sequence: 1, flags: [.ack, .psh], payload: [1, 2, 3])
    }

    func isShed(_ shedder: LoadShedder, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { shedder.isShed($0, linkType: .ethernet) }
    }

    @Test func aConnectionIsShedWholeInBothDirectionsAndNoOtherIs() {
        var shedder = LoadShedder()
        let request = packet("10.0.0.1:40000", "10.0.0.2:9000"), response = packet("10.0.0.2:9000", "10.0.0.1:40000")
        #expect(!isShed(shedder, request) && shedder.connections == 0)
        request.withUnsafeBytes { shedder.shed($0, linkType: .ethernet) }
        #expect(isShed(shedder, request) && isShed(shedder, response))
        #expect(shedder.connections == 1)
        request.withUnsafeBytes { shedder.shed($0, linkType: .ethernet) }  // dropped again: still one connection
        #expect(shedder.connections == 1)
        // 1,000 other connections (another client port each): none shares its fate.
        let others = (1...1_000).map { packet("10.0.0.1:\(40_000 + $0)", "10.0.0.2:9000") }
        #expect(others.filter { isShed(shedder, $0) }.count == 0)
    }

    @Test func whatIsNotTCPIsNeverShed() {
        var shedder = LoadShedder()
        let arp: [UInt8] = [UInt8](repeating: 0xFF, count: 12) + [0x08, 0x06] + [UInt8](repeating: 0, count: 28)
        arp.withUnsafeBytes { shedder.shed($0, linkType: .ethernet) }
        #expect(shedder.connections == 0 && !isShed(shedder, arp))
    }
}
