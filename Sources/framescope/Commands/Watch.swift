import ArgumentParser
import FramescopeCapture
import FramescopeCore
import FramescopeReport

#if canImport(Glibc)
import Glibc
#endif

extension Framescope {
    struct Watch: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Capture live on an interface: a view refreshed while traffic flows, then the analyze report.",
            discussion: """
                Stops on Ctrl-C or SIGTERM, after --duration seconds or --count packets, then prints the same \
                report as analyze, with the kernel's drop counts (drops turn into gaps). On a terminal the view \
                is redrawn every --interval; otherwise one key=value line per interval goes to standard output \
                (to standard error when the JSON report goes to standard output). NO_COLOR turns colour off.
                Capturing needs root or CAP_NET_RAW/CAP_NET_ADMIN: \
                sudo setcap cap_net_raw,cap_net_admin=eip $(which framescope)
                """)

        @Argument(help: "The interface to capture on (framescope watch --list shows them).")
        var interface: String?

        @Flag(help: "List capture interfaces with their addresses, and exit.")
        var list = false

        @OptionGroup var analysis: AnalysisOptions

        @Option(help: ArgumentHelp("Only packets matching this BPF expression (compiled by libpcap, applied in the kernel).", valueName: "expression"))
        var filter: String?

        @Option(help: ArgumentHelp("Seconds between view refreshes.", valueName: "seconds"))
        var interval: Double = 1

        @Option(help: ArgumentHelp("Stop after this many seconds.", valueName: "seconds"))
        var duration: Double?

        @Option(name: [.customShort("c"), .long], help: "Stop after this many packets.")
        var count: Int?

        @Option(name: [.customShort("w"), .long], help: ArgumentHelp("Also save the raw packets to this pcap file (analyze can re-read it).", valueName: "file.pcap"))
        var write: String?

        @Option(help: ArgumentHelp("Kernel capture buffer size (e.g. 64M); libpcap's default otherwise.", valueName: "size"))
        var bufferSize: ByteSize?

        @Option(help: "Bytes kept of each packet.")
        var snaplen = 262_144

        @Flag(help: "Put the interface in promiscuous mode.")
        var promiscuous = false

        @Flag(help: "Deliver packets as they arrive instead of in blocks (more wake-ups, fresher view).")
        var immediate = false

        @OptionGroup(title: "Output") var out: OutputOptions
        @OptionGroup(title: "CI gates") var gates: FailOnOptions

        func validate() throws {
            if !list && interface == nil { throw ValidationError("name the interface to capture on (framescope watch --list shows them)") }
            if interval <= 0 { throw ValidationError("--interval must be positive") }
            if let duration, duration <= 0 { throw ValidationError("--duration must be positive") }
            if let count, count <= 0 { throw ValidationError("--count must be a positive number of packets") }
        }

        func run() throws {
            if list { return try listInterfaces() }
            if analysis.dissectors.wantsAuto {
                // Inference reads the streams before it frames them; a live capture cannot be read twice.
                writeError("framescope: watch cannot infer the framing live: record with -w FILE.pcap, then run analyze FILE.pcap --dissector auto\n")
                throw ExitCode(64)
            }
            let chain = try AnalysisChain(options: analysis, choice: try analysis.dissectors.choiceOrExit(), format: out.format)
            var options = LiveCaptureOptions(interface: interface!)
            options.filter = filter
            options.snapLength = snaplen
            options.promiscuous = promiscuous
            options.immediate = immediate
            options.bufferSize = bufferSize?.bytes
            let capture: LiveCapture
            do {
                capture = try LiveCapture(options, writeTo: write)
            } catch {
                writeError("framescope: \(error)\n")
                if case .badFilter = error { throw ExitCode(64) }
                throw ExitCode(1)
            }
            let session = WatchSession(
                capture: capture, chain: chain, limits: analysis.limits.reassembly, interval: interval, duration: duration, count: count,
                reportOnStdout: out.output == nil, jsonReport: out.format == .json)
            var report = try session.run()
            report.setCapture(
                AnalysisReport.Capture(
                    interface: options.interface, filter: filter, packetsCaptured: session.packets,
                    packetsReceived: session.finalStatistics?.received ?? session.packets,
                    kernelDrops: session.finalStatistics?.kernelDrops ?? 0, interfaceDrops: session.finalStatistics?.interfaceDrops ?? 0,
                    durationSeconds: session.elapsed, savedTo: write))
            try out.write(report)
            try gates.check(report)
            if let failure = session.failure {
                writeError("framescope: capture on \(options.interface) failed: \(failure)\n")
                throw ExitCode(1)
            }
        }

        private func listInterfaces() throws {
            let interfaces: [CaptureInterface]
            do { interfaces = try LiveCapture.interfaces() } catch {
                writeError("framescope: \(error)\n")
                throw ExitCode(1)
            }
            var table = TextTable([("INTERFACE", .left), ("STATE", .left), ("ADDRESSES", .left), ("DESCRIPTION", .left)])
            for i in interfaces {
                let state = [i.isUp ? "up" : "down", i.isRunning ? "running" : nil, i.isLoopback ? "loopback" : nil].compactMap { $0 }
                table.append([i.name, state.joined(separator: ","), i.addresses.joined(separator: " "), i.description ?? ""])
            }
            print(table.render(), terminator: "")
        }
    }
}
