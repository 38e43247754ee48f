import FramescopeCapture
import FramescopeCore
import FramescopeReport

#if canImport(Glibc)
import Glibc
#endif

/// The live loop: a capture thread (libpcap → `--write` file → queue) feeds this one (flow
/// table → the analysis chain), and the view is refreshed every interval.
final class WatchSession {
    let capture: LiveCapture
    let chain: AnalysisChain
    let limits: ReassemblyOptions
    let interval: Double
    let stop: CaptureThread.Stop
    let queueBytes: Int
    let view: LiveView

    private(set) var elapsed = 0.0
    /// The capture thread's figures when it ended.
    private(set) var final = CaptureThread.Progress()

    init(capture: LiveCapture, chain: AnalysisChain, limits: ReassemblyOptions, interval: Double, stop: CaptureThread.Stop, queueBytes: Int,
         reportOnStdout: Bool, jsonReport: Bool) {
        self.capture = capture
        self.chain = chain
        self.limits = limits
        self.interval = interval
        self.stop = stop
        self.queueBytes = queueBytes
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
        let thread = CaptureThread(capture, queueBytes: queueBytes, stop: stop)
        var nextRefresh = start + interval
        while thread.next(waitingAtMost: nextRefresh - monotonicSeconds(), { info, data in table.process(data, info: info) }) {
            let now = monotonicSeconds()
            guard now >= nextRefresh else { continue }
            elapsed = now - start
            view.refresh(elapsed: elapsed, now: now, progress: thread.progress, analyzer: table.sink.first, open: openAnalyses(table))
            nextRefresh = max(nextRefresh + interval, now + interval / 2)
        }
        final = thread.join()
        elapsed = monotonicSeconds() - start
        table.finish()
        view.finish()
        return try chain.report(of: table.sink, decode: table.decodeStatistics, context: table.context, inputs: [
            FlowsReport.Input(path: capture.options.interface, packets: final.packets, firstFrame: 1, reader: "libpcap-live", error: final.failure),
        ])
    }

    private func openAnalyses(_ table: FlowTable<AnalysisChain.Sink>) -> [ConnectionAnalysis] {
        var open: [ConnectionAnalysis] = []
        table.forEachOpenConnection { summary, state in open.append(table.sink.first.analysis(ofOpen: summary, state.first)) }
        return open
    }

    /// SIGINT, SIGTERM and SIGHUP end the capture the same way: the file closed, the report written.
    /// They are unblocked too: a parent may spawn us with them blocked (a libdispatch worker thread
    /// blocks them, and posix_spawn hands its mask on), and then Ctrl-C would do nothing. A SIGHUP
    /// ignored by `nohup` stays ignored, as tcpdump keeps it.
    private func installSignalHandlers() {
        var handled = sigset_t()
        sigemptyset(&handled)
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
            let previous = signal(signalNumber) { _ in stopRequestedFlag = 1 }
            let wasIgnored = previous.map { unsafeBitCast($0, to: Int.self) == 1 } ?? false  // SIG_IGN is (handler)1
            if signalNumber == SIGHUP, wasIgnored { signal(SIGHUP, SIG_IGN) }
            sigaddset(&handled, signalNumber)
        }
        pthread_sigmask(SIG_UNBLOCK, &handled, nil)
    }
}

nonisolated(unsafe) var stopRequestedFlag: sig_atomic_t = 0
/// Whether a stop signal came (read by the capture thread).
@Sendable func stopRequested() -> Bool { stopRequestedFlag != 0 }
