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

/// A live capture on one interface, optionally saving every packet to a pcap file (rotated as
/// tcpdump's `-C`, `-W` and `-G` say). Read it from one thread: `CaptureThread` does.
public final class LiveCapture {
    private let handle: PcapHandle
    private var savefile: RotatingSavefile?
    public let options: LiveCaptureOptions
    public let linkType: LinkType
    public private(set) var frame: UInt64 = 0

    public init(_ options: LiveCaptureOptions, writeTo path: String? = nil, rotation: SavefileRotation = SavefileRotation()) throws(CaptureError) {
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
            savefile = try RotatingSavefile(handle: handle, pattern: path, rotation: rotation, now: time(nil))
        }
    }

    public enum Next {
        case packet
        /// Nothing ready in the kernel's buffer now.
        case timeout
        case stopped
        case failure(String)
    }

    /// Takes the next packet if one is ready, saving it first; its bytes are valid during `body` only.
    public func next(_ body: (CaptureInfo, UnsafeRawBufferPointer) -> Void) -> Next {
        var got = false
        var writeFailure: CaptureError?
        let result = handle.next { header, bytes in
            got = true
            frame += 1
            do throws(CaptureError) { try savefile?.write(header, bytes) } catch { writeFailure = error }
            body(
                CaptureInfo(frame: frame, timestamp: header.timestamp, linkType: linkType, captureLength: header.captureLength, originalLength: header.originalLength),
                bytes)
        }
        if let writeFailure { return .failure("\(writeFailure)") }
        switch result {
        case .packet: return got ? .packet : .timeout
        case .timeout: return .timeout
        case .end: return .stopped
        case .failure(let f): return .failure(f.message)
        }
    }

    /// Waits up to the read timeout for packets (a signal ends the wait too).
    public func waitForPackets() { handle.waitForPackets(milliseconds: options.timeoutMilliseconds) }

    /// `-G` with `-W`: the last file is written, so the capture is over.
    public var savefileComplete: Bool { savefile?.isComplete ?? false }

    /// The `--write` files closed so far, in the order they were written.
    public var savedFiles: [String] { savefile?.written ?? [] }

    public var statistics: CaptureStatistics? { handle.statistics() }

    /// Closes the `--write` file and gives it its name (until then it has a temporary one: a
    /// killed capture leaves no half-written file under the name).
    public func finishWriting() throws(CaptureError) {
        try savefile?.close()
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
