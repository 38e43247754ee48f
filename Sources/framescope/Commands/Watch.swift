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
            commandName: "watch",
            abstract: "Capture live on an interface: a view refreshed while traffic flows, then the analyze report.",
            discussion: """
                Stops on Ctrl-C, SIGTERM or SIGHUP, after --duration seconds or --count packets, then prints the \
                same report as analyze, with the kernel's drop counts (drops turn into gaps). libpcap is read on a \
                thread of its own that saves every packet to --write before the analysis sees it; if the analysis \
                falls a whole --queue-size behind, packets are dropped before it and counted apart from the \
                kernel's ("analysis fell behind"), still saved. On a terminal the view is redrawn every \
                --interval; otherwise one key=value line per interval goes to standard output (to standard error \
                when the JSON report goes to standard output). NO_COLOR turns colour off.
                --write rotates as tcpdump's -w does: -C SIZE (millions of bytes, or k/m/g for KiB/MiB/GiB) starts \
                FILE1, FILE2, … once a file is larger; with -W N they are FILE0…FILE(N-1), overwritten in turn. \
                -G SECONDS starts a new file (FILE is a strftime pattern, e.g. 'cap-%H%M%S.pcap') on the first \
                packet SECONDS after the current one began; -G with -W N and no -C stops after N files.
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

        @Option(name: [.customShort("C"), .customLong("file-size")], help: ArgumentHelp("With --write: a new file once the current one is larger than SIZE (tcpdump's -C: millions of bytes, or k/m/g).", valueName: "size"))
        var fileSize: String?

        @Option(name: [.customShort("W"), .customLong("file-count")], help: ArgumentHelp("With -C: a ring of N files; with -G alone: stop after N files (tcpdump's -W).", valueName: "n"))
        var fileCount: Int?

        @Option(name: [.customShort("G"), .customLong("rotate-seconds")], help: ArgumentHelp("With --write: a new file every SECONDS, named by strftime of its start (tcpdump's -G).", valueName: "seconds"))
        var rotateSeconds: Int?

        /// 32 MiB: a burst of 800 messages of up to 20 KB each way on loopback (64 KB segments)
        /// overflowed 2 MiB (tcpdump's default) in 5 runs of 5 and 8 MiB in 1 of 5; 32 MiB in none of 20.
        static let defaultBufferSize = 32 << 20

        @Option(help: ArgumentHelp("Kernel capture buffer size (default 32MiB; tcpdump's is 2MiB, which bursts of large segments overflow).", valueName: "size"))
        var bufferSize: ByteSize = ByteSize(defaultBufferSize)

        @Option(help: ArgumentHelp("Packets held for the analysis when it falls behind the capture (default 64MiB); past it they are dropped before the analysis and counted.", valueName: "size"))
        var queueSize: ByteSize = ByteSize(64 << 20)

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
            if let fileSize, SavefileRotation.parseFileSize(fileSize) == nil {
                throw ValidationError("-C takes a positive size: millions of bytes, or a number with k, m or g (KiB, MiB, GiB)")
            }
            if let fileCount, fileCount <= 0 { throw ValidationError("-W must be a positive number of files") }
            if let rotateSeconds, rotateSeconds <= 0 { throw ValidationError("-G must be a positive number of seconds") }
            if write == nil && (fileSize != nil || fileCount != nil || rotateSeconds != nil) { throw ValidationError("-C, -W and -G rotate the --write file: give --write FILE") }
            if fileCount != nil && fileSize == nil && rotateSeconds == nil { throw ValidationError("-W needs -C or -G") }
            if bufferSize.bytes <= 0 || queueSize.bytes <= 0 { throw ValidationError("--buffer-size and --queue-size must be positive") }
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
            options.bufferSize = bufferSize.bytes
            let rotation = SavefileRotation(fileSize: fileSize.flatMap(SavefileRotation.parseFileSize), fileCount: fileCount, seconds: rotateSeconds)
            let capture: LiveCapture
            do {
                capture = try LiveCapture(options, writeTo: write, rotation: rotation)
            } catch {
                writeError("framescope: \(error)\n")
                if case .badFilter = error { throw ExitCode(64) }
                throw ExitCode(1)
            }
            let session = WatchSession(
                capture: capture, chain: chain, limits: analysis.limits.reassembly, interval: interval,
                stop: CaptureThread.Stop(afterPackets: count, afterSeconds: duration, requested: stopRequested), queueBytes: queueSize.bytes,
                reportOnStdout: out.output == nil, jsonReport: out.format == .json)
            var report = try session.run()
            let final = session.final
            report.setCapture(
                AnalysisReport.Capture(
                    interface: options.interface, filter: filter, packetsCaptured: final.packets,
                    packetsReceived: final.statistics?.received ?? final.packets,
                    kernelDrops: final.statistics?.kernelDrops ?? 0, interfaceDrops: final.statistics?.interfaceDrops ?? 0,
                    analysisDrops: final.analysisDrops, shedConnections: final.shedConnections, durationSeconds: session.elapsed, savedTo: write, files: capture.savedFiles))
            try out.write(report)
            try gates.check(report)
            if let failure = final.failure {
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
