import FramescopeCapture
import FramescopeCore
import FramescopeReport

#if canImport(Glibc)
import Glibc
#endif

/// The live loop: capture → flow table → the analysis chain, with the view refreshed every interval.
final class WatchSession {
    let capture: LiveCapture
    let chain: AnalysisChain
    let limits: ReassemblyOptions
    let interval: Double
    let duration: Double?
    let count: Int?
    let view: LiveView

    private(set) var packets = 0
    private(set) var bytes = 0
    private(set) var elapsed = 0.0
    private(set) var finalStatistics: CaptureStatistics?
    private(set) var failure: String?

    init(capture: LiveCapture, chain: AnalysisChain, limits: ReassemblyOptions, interval: Double, duration: Double?, count: Int?,
         reportOnStdout: Bool, jsonReport: Bool) {
        self.capture = capture
        self.chain = chain
        self.limits = limits
        self.interval = interval
        self.duration = duration
        self.count = count
        let terminal = isatty(1) != 0
        // Lines never mix into a JSON report on standard output.
        let fd: Int32 = !terminal && reportOnStdout && jsonReport ? 2 : 1
        view = LiveView(fd: fd, fullScreen: terminal && fd == 1, color: getenv("NO_COLOR") == nil && terminal,
                        interface: capture.options.interface, filter: capture.options.filter)
    }

    func run() throws -> AnalysisReport {
        installSignalHandlers()
        var table = FlowTable(sink: chain.sink, options: limits)
        writeError("framescope: capturing on \(capture.options.interface)\(capture.options.filter.map { " (filter: \($0))" } ?? ""); Ctrl-C to stop\n")
        view.start()
        let start = monotonicSeconds()
        var nextRefresh = start + interval
        loop: while stopRequested == 0 {
            if let count, packets >= count { break }
            let now = monotonicSeconds()
            if let duration, now - start >= duration { break }
            switch capture.next({ info, data in
                table.process(data, info: info)
                packets += 1
                bytes += info.originalLength
            }) {
            case .packet, .timeout: break
            case .stopped: break loop
            case .failure(let message):
                failure = message
                break loop
            }
            let after = monotonicSeconds()
            if after >= nextRefresh {
                elapsed = after - start
                view.refresh(elapsed: elapsed, packets: packets, bytes: bytes, statistics: capture.statistics, analyzer: table.sink.first, open: openAnalyses(table))
                nextRefresh = max(nextRefresh + interval, after + interval / 2)
            }
        }
        elapsed = monotonicSeconds() - start
        finalStatistics = capture.statistics
        do { try capture.finishWriting() } catch { throw Failure(message: "\(error)") }
        table.finish()
        view.finish()
        return try chain.report(of: table.sink, decode: table.decodeStatistics, context: table.context, inputs: [
            FlowsReport.Input(path: capture.options.interface, packets: packets, firstFrame: 1, reader: "libpcap-live", error: failure),
        ])
    }

    private func openAnalyses(_ table: FlowTable<AnalysisChain.Sink>) -> [ConnectionAnalysis] {
        var open: [ConnectionAnalysis] = []
        table.forEachOpenConnection { summary, state in open.append(table.sink.first.analysis(ofOpen: summary, state.first)) }
        return open
    }

    private func installSignalHandlers() {
        signal(SIGINT) { _ in stopRequestedFlag = 1 }
        signal(SIGTERM) { _ in stopRequestedFlag = 1 }
    }
}

nonisolated(unsafe) var stopRequestedFlag: sig_atomic_t = 0
private var stopRequested: sig_atomic_t { stopRequestedFlag }

func monotonicSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}
