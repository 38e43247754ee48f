import FramescopeCore

#if canImport(Glibc)
import Glibc
#endif

/// How to open an interface.
public struct LiveCaptureOptions: Sendable {
    public var interface: String
    public var snapLength = 262_144
    public var promiscuous = false
    public var immediate = false
    /// Kernel buffer size in bytes; libpcap's default when nil.
    public var bufferSize: Int?
    /// How long a read may wait, so the loop can refresh the view and notice a stop.
    public var timeoutMilliseconds = 100
    public var filter: String?

    public init(interface: String) { self.interface = interface }
}

public struct CaptureStatistics: Sendable, Equatable {
    public var received: Int
    public var kernelDrops: Int
    public var interfaceDrops: Int
}

public struct CaptureInterface: Sendable {
    public var name: String
    public var description: String?
    public var addresses: [String]
    public var isUp: Bool
    public var isRunning: Bool
    public var isLoopback: Bool
}

/// A live capture on one interface, optionally saving every packet to a pcap file.
public final class LiveCapture {
    private let handle: PcapHandle
    private var dumper: PcapDumper?
    public let options: LiveCaptureOptions
    public let linkType: LinkType
    public private(set) var frame: UInt64 = 0

    public init(_ options: LiveCaptureOptions, writeTo path: String? = nil) throws(CaptureError) {
        self.options = options
        switch PcapHandle.openLive(options) {
        case .success(let opened): handle = opened
        case .failure(let failure): throw Self.explain(failure, interface: options.interface)
        }
        linkType = handle.linkType
        if let expression = options.filter, let message = handle.setFilter(expression) {
            throw CaptureError.badFilter(expression: expression, message: message)
        }
        if let path {
            let file: OutputFile
            do { file = try OutputFile(path) } catch { throw CaptureError.cannotWrite(path: path, message: error.reason) }
            switch handle.openDump(file) {
            case .success(let d): dumper = d
            case .failure(let f): throw CaptureError.cannotWrite(path: path, message: f.message)
            }
        }
    }

    public enum Next {
        case packet
        case timeout
        case stopped
        case failure(String)
    }

    /// Waits up to the read timeout for a packet; its bytes are valid during `body` only.
    public func next(_ body: (CaptureInfo, UnsafeRawBufferPointer) -> Void) -> Next {
        var got = false
        let result = handle.next { header, bytes in
            got = true
            frame += 1
            dumper?.write(header, bytes)
            body(
                CaptureInfo(frame: frame, timestamp: header.timestamp, linkType: linkType, captureLength: header.captureLength, originalLength: header.originalLength),
                bytes)
        }
        switch result {
        case .packet: return got ? .packet : .timeout
        case .timeout:
            handle.waitForPackets(milliseconds: options.timeoutMilliseconds)
            return .timeout
        case .end: return .stopped
        case .failure(let f): return .failure(f.message)
        }
    }

    public var statistics: CaptureStatistics? { handle.statistics() }

    public func flush() { dumper?.flush() }

    /// Closes the `--write` file and gives it its name (until then it has a temporary one: a
    /// killed capture leaves no half-written file under the name).
    public func finishWriting() throws(CaptureError) {
        guard let dumper else { return }
        self.dumper = nil
        do { try dumper.close() } catch { throw CaptureError.cannotWrite(path: error.path, message: error.reason) }
    }

    public static func interfaces() throws(CaptureError) -> [CaptureInterface] {
        switch PcapHandle.interfaces() {
        case .success(let list): return list
        case .failure(let f): throw CaptureError.live(interface: "", message: f.message)
        }
    }

    private static func explain(_ failure: LiveFailure, interface: String) -> CaptureError {
        if failure.isPermissionDenied { return .permissionDenied(interface: interface, message: failure.message) }
        if failure.isNoSuchDevice {
            let names = (try? interfaces().map(\.name)) ?? []
            return .noSuchInterface(interface: interface, available: names)
        }
        if failure.isInterfaceDown { return .interfaceDown(interface: interface) }
        return .live(interface: interface, message: failure.message)
    }
}

@available(*, unavailable)
extension LiveCapture: Sendable {}
